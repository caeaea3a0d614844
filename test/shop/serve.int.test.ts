import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { afterEach, describe, expect, it } from "vitest";

/** `npm run serve` as a process: how it treats the admin token at start. */

const children: ChildProcess[] = [];
const dirs: string[] = [];
afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill("SIGKILL");
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function serve(env: Record<string, string>) {
  const dir = mkdtempSync(join(tmpdir(), "oncely-serve-"));
  dirs.push(dir);
  const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => k !== "ONCELY_ADMIN_TOKEN"));
  const child = spawn(process.execPath, ["--import", "tsx", "examples/shop/serve.ts"], {
    env: { ...clean, PORT: "0", DATABASE_URL: `sqlite:${join(dir, "shop.db")}`, ...env },
    cwd: process.cwd(),
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.push(child);
  let stderr = "";
  child.stderr?.on("data", (chunk) => {
    stderr += chunk;
  });
  const lines: string[] = [];
  const reader = createInterface({ input: child.stdout as NodeJS.ReadableStream });
  reader.on("line", (line) => lines.push(line));
  const exited = once(child, "exit").then(([code]) => code as number | null);
  return { child, lines, exited, stderr: () => stderr };
}

describe("npm run serve and the admin token", () => {
  it("refuses to listen beyond loopback without ONCELY_ADMIN_TOKEN, saying so", async () => {
    const proc = serve({ HOST: "0.0.0.0" });
    expect(await proc.exited).toBe(2);
    expect(proc.stderr()).toContain("refusing to listen on 0.0.0.0 without an admin token: set ONCELY_ADMIN_TOKEN");
    expect(proc.lines.join("\n")).not.toContain("listening");
  });

  it("on loopback, generates a token, prints it, and the admin API answers only to it", async () => {
    const proc = serve({ HOST: "127.0.0.1" });
    await expect.poll(() => proc.lines.length, { timeout: 30_000 }).toBeGreaterThanOrEqual(2);
    const url = /listening on (\S+)/.exec(proc.lines[0] ?? "")?.[1] as string;
    const token = /admin token .*: (\S+)$/.exec(proc.lines[1] ?? "")?.[1] as string;
    expect(token).toMatch(/^adm_[A-Za-z0-9_-]{32}$/);
    expect((await fetch(`${url}/admin/stats`)).status).toBe(401);
    expect((await fetch(`${url}/admin/stats`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(200);
    proc.child.kill("SIGTERM");
    expect(await proc.exited).toBe(0);
  });
});
