import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { OPERATOR_ACTIONS } from "../../src/console/audit.js";
import { encodeEnvelope } from "../../src/messaging/envelope.js";
import { sqliteJournal } from "../../src/sqlite/index.js";
import { orderEvent } from "../messaging/support/orders.js";

// The CLI as a user runs it: a child process on a SQLite journal file.

const dir = mkdtempSync(join(tmpdir(), "oncely-cli-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Run a CLI script; `closeAfterFirstChunk` closes our end of its stdout, as `| head -1` does. */
async function cli(script: string, args: string[], closeAfterFirstChunk = false): Promise<Ran> {
  const child = spawn(process.execPath, ["--import", "tsx", script, ...args], {
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, DATABASE_URL: "" },
  });
  let stdout = "";
  let stderr = "";
  child.stderr.on("data", (chunk) => {
    stderr += chunk;
  });
  child.stdout.on("data", (chunk) => {
    stdout += chunk;
    if (closeAfterFirstChunk) child.stdout.destroy();
  });
  const [code] = (await once(child, "exit")) as [number | null];
  return { code, stdout, stderr };
}

async function journalAt(name: string) {
  const path = join(dir, name);
  const journal = sqliteJournal({ path });
  await journal.migrate();
  return { journal, db: `sqlite:${path}` };
}

async function withLetter(name: string) {
  const { journal, db } = await journalAt(name);
  await journal.commit({
    deadLetters: [
      {
        id: "view|o1:OrderPlaced",
        consumer: "view",
        messageId: "o1:OrderPlaced",
        payload: { subject: "shop.orders.OrderPlaced", body: encodeEnvelope(orderEvent("o1", 1)), envelope: null },
        error: "read model down",
        stack: "Error: read model down",
        attempts: 5,
        firstFailedAt: 1000,
        lastFailedAt: 2000,
      },
    ],
    now: 2000,
  });
  await journal.close();
  return db;
}

describe("the oncely CLI as a process", () => {
  it("built in, it has no consumers: replay fails saying how to replay from a CLI of your own", async () => {
    const db = await withLetter("builtin.db");
    const ran = await cli("src/cli/main.ts", ["--db", db, "dead-letters", "replay", "view|o1:OrderPlaced"]);
    expect(ran.code).toBe(1);
    expect(ran.stderr).toContain("needs the consumers of your application");
    expect(ran.stderr).toContain("runOncelyCli({ consumers:");
  });

  it("a user's own CLI with runOncelyCli({ consumers }) replays through them and records who did it", async () => {
    const db = await withLetter("ops.db");
    const args = ["--db", db, "dead-letters", "replay", "view|o1:OrderPlaced", "--by", "ada"];
    const ran = await cli("test/cli/support/ops-cli.ts", args);
    expect(ran.stderr).toBe("");
    expect(ran.code).toBe(0);
    expect(ran.stdout).toBe("replayed view|o1:OrderPlaced: applied\n");
    const journal = sqliteJournal({ path: db.slice("sqlite:".length) });
    expect((await journal.getDeadLetter("view|o1:OrderPlaced"))?.status).toBe("replayed");
    expect((await journal.getDocument("per-event", "o1:OrderPlaced"))?.doc).toEqual({ count: 1 });
    expect((await journal.listDocuments(OPERATOR_ACTIONS)).map((d) => d.doc)).toEqual([
      expect.objectContaining({ action: "replay", by: "ada", via: "cli" }),
    ]);
    await journal.close();
  });

  it("stops quietly with exit 0 when its reader closes the pipe early (`oncely effects list | head -1`)", async () => {
    const { journal, db } = await journalAt("epipe.db");
    // Far more output than a pipe holds (64 KiB), so the CLI is still writing when the reader goes.
    await journal.commit({
      outbox: Array.from({ length: 3000 }, (_, i) => ({
        id: `order:${i}:payment`,
        category: "effect" as const,
        kind: "payment",
        stream: `order/${i}`,
        payload: { input: { amount: i } },
        notBefore: 0,
      })),
      now: 1,
    });
    await journal.close();
    const ran = await cli("src/cli/main.ts", ["--db", db, "effects", "list", "--limit", "3000"], true);
    expect(ran.stderr).toBe("");
    expect(ran.code).toBe(0);
    expect(ran.stdout.length).toBeGreaterThan(0);
  });
});
