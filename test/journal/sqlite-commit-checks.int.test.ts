import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import { CheckpointConflictError, IdempotencyKeyReusedError } from "../../src/base/errors.js";
import { MemoryJournal } from "../../src/journal/memory.js";
import type { Commit, Journal, NewOutboxRow } from "../../src/journal/types.js";
import { sqliteJournal } from "../../src/sqlite/index.js";

/**
 * SQLite tells a duplicate inbox row and a reused effect key by the insert itself (ON CONFLICT DO
 * NOTHING), not by a read before it: a refusal after such a write must still leave nothing of its
 * commit, and give the memory journal's answer.
 */
const dir = mkdtempSync(join(tmpdir(), "oncely-sqlite-checks-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;

const effect = (id: string, stream: string, input: unknown): NewOutboxRow => ({
  id,
  category: "effect",
  kind: "charge",
  stream,
  payload: { input },
  notBefore: 0,
});

describe("SQLite commit checks by insert", () => {
  let sqlite: Journal;
  let memory: Journal;
  beforeEach(async () => {
    sqlite = sqliteJournal({ path: join(dir, `j-${++n}.db`) });
    await sqlite.migrate();
    memory = new MemoryJournal();
  });
  afterEach(async () => {
    await sqlite.close();
  });

  /** The same commits, sent together, on both journals: each settles the same way. */
  const both = async (commits: Commit[]) => {
    const settle = (j: Journal) =>
      Promise.allSettled(commits.map((c) => j.commit(structuredClone(c)))).then((all) =>
        all.map((r) => (r.status === "fulfilled" ? "ok" : (r.reason as Error).constructor.name)),
      );
    const [onSqlite, onMemory] = await Promise.all([settle(sqlite), settle(memory)]);
    expect(onSqlite).toEqual(onMemory);
    return onSqlite;
  };

  it("one key twice in one commit, with different inputs: no reuse, the first row is kept", async () => {
    const fates = await both([
      { stream: "order/1", outbox: [effect("k", "order/1", { a: 1 }), effect("k", "order/1", { a: 2 })], now: 1 },
    ]);
    expect(fates).toEqual(["ok"]);
    expect((await sqlite.getOutbox("k"))?.payload).toEqual({ input: { a: 1 } });
  });

  it("a key reused after the commit's inbox row was written: refused, its inbox row gone, the others land", async () => {
    await both([{ outbox: [effect("held", "order/9", { a: 1 })], now: 1 }]);
    const fates = await both([
      { stream: "order/1", inbox: { consumer: "order/1", messageId: "m1", reply: 1 }, now: 2 },
      {
        stream: "order/2",
        inbox: { consumer: "order/2", messageId: "m2", reply: 2 },
        outbox: [effect("held", "order/2", { a: 1 })],
        now: 2,
      },
      { stream: "order/3", inbox: { consumer: "order/3", messageId: "m3", reply: 3 }, now: 2 },
    ]);
    expect(fates).toEqual(["ok", IdempotencyKeyReusedError.name, "ok"]);
    expect(await sqlite.getInbox("order/2", "m2")).toBeUndefined();
    expect(await sqlite.getInbox("order/1", "m1")).toMatchObject({ reply: 1 });
    expect(await sqlite.getInbox("order/3", "m3")).toMatchObject({ reply: 3 });
  });

  it("a checkpoint conflict after the inbox row was written: refused, nothing of it left", async () => {
    await both([{ checkpoint: { consumer: "c", source: "s", version: 3 }, now: 1 }]);
    const fates = await both([
      {
        inbox: { consumer: "c", messageId: "m1", reply: 1 },
        checkpoint: { consumer: "c", source: "s", version: 5, expected: 4 },
        now: 2,
      },
      { inbox: { consumer: "c", messageId: "m2", reply: 2 }, now: 2 },
    ]);
    expect(fates).toEqual([CheckpointConflictError.name, "ok"]);
    expect(await sqlite.getInbox("c", "m1")).toBeUndefined();
    expect(await sqlite.getCheckpoint("c", "s")).toBe(3);
  });
});
