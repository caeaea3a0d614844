import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { createInterface } from "node:readline";
import { afterEach, describe, expect, it } from "vitest";
import { get, post } from "./test-http.js";

/** The providers as separate processes, configured from flags and environment. */

const children: ChildProcess[] = [];
afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill("SIGKILL");
});

function run(provider: string, args: string[], env: Record<string, string> = {}) {
  const child = spawn(process.execPath, ["--import", "tsx", `examples/shop/providers/${provider}/main.ts`, ...args], {
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.push(child);
  let stderr = "";
  child.stderr?.on("data", (chunk) => {
    stderr += chunk;
  });
  const firstLine = new Promise<string | undefined>((resolve) => {
    const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
    lines.once("line", resolve);
    lines.once("close", () => resolve(undefined));
  });
  const exited = once(child, "exit").then(([code]) => code as number | null);
  return { child, firstLine, exited, stderr: () => stderr };
}

describe("provider processes", () => {
  it("runs the payment provider from env and flags, prints its URL, and stops on SIGTERM", async () => {
    const proc = run("payment", ["--decline-amounts-ending-with", "13"], { PAYMENT_FAIL_RATE: "0" });
    const line = await proc.firstLine;
    const { url, provider } = JSON.parse(line ?? "{}") as { url: string; provider: string };
    expect(provider).toBe("payment");
    const declined = await post(url, "/payments", { orderId: "1", amount: 113, currency: "EUR" }, { key: "k" });
    expect(declined.status).toBe(402);
    expect((await get(url, "/ledger")).body).toMatchObject({ declines: [expect.objectContaining({ amount: 113 })] });
    proc.child.kill("SIGTERM");
    expect(await proc.exited).toBe(0);
  });

  it.each([
    ["payment", "--decline-amounts-ending-with <value>", "PAYMENT_DECLINE_AMOUNTS_ENDING_WITH"],
    ["email", "--drop-after-rate <value>", "EMAIL_DROP_AFTER_RATE"],
    ["warehouse", "--webhook-secret <value>", "WAREHOUSE_WEBHOOK_SECRET"],
  ])("answers --help of the %s provider with its usage and exit 0, starting nothing", async (provider, flag, env) => {
    let stdout = "";
    const proc = run(provider, ["--help"]);
    proc.child.stdout?.on("data", (chunk) => {
      stdout += chunk;
    });
    expect(await proc.exited).toBe(0);
    expect(stdout).toContain(`Usage: tsx examples/shop/providers/${provider}/main.ts [options]`);
    expect(stdout).toMatch(new RegExp(`${flag}\\s+${env}\\s+\\S`));
    expect(stdout).not.toContain('"url"');
    expect(proc.stderr()).toBe("");
  });

  it.each([
    ["payment", ["--fail-rate", "2"], {}, "failRate (--fail-rate / PAYMENT_FAIL_RATE)"],
    ["email", [], { EMAIL_PORT: "http" }, "port (--port / EMAIL_PORT)"],
    ["warehouse", ["--shop-url", "nowhere"], {}, "shopUrl (--shop-url / WAREHOUSE_SHOP_URL)"],
    ["warehouse", ["--colour", "red"], {}, "Unknown option '--colour'"],
    [
      "warehouse",
      ["--shop-url", "http://127.0.0.1:3000"],
      {},
      "webhookSecret (--webhook-secret / WAREHOUSE_WEBHOOK_SECRET): is required",
    ],
    [
      "warehouse",
      [],
      { WAREHOUSE_WEBHOOK_SECRET: "short" },
      "webhookSecret (--webhook-secret / WAREHOUSE_WEBHOOK_SECRET): must be at least 16",
    ],
  ])("refuses bad configuration of the %s provider naming the setting", async (provider, args, env, message) => {
    const proc = run(provider, args, env);
    expect(await proc.exited).toBe(2);
    expect(proc.stderr()).toContain(message);
    expect(await proc.firstLine).toBeUndefined();
  });
});
