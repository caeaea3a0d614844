import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  DuplicateMessageError,
  IdempotencyKeyReusedError,
  InvalidInputError,
  VersionConflictError,
} from "../../src/base/errors.js";
import type { Commit } from "../../src/journal/types.js";
import { sqliteJournal } from "../../src/sqlite/index.js";

/**
 * Group commit on SQLite: a batch runs without a savepoint per commit (checks come before any
 * write), and a write that fails part-way sends the whole batch again with savepoints, so each
 * commit still keeps its own fate.
 */
const dir = mkdtempSync(join(tmpdir(), "oncely-sqlite-group-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const order = (n: number, eventId = `placed-${n}`): Commit => ({
  stream: `order/${n}`,
  expectedVersion: 0,
  events: [{ eventId, type: "Placed", data: { n } }],
  outbox: [
    { id: `charge-${n}`, category: "effect", kind: "charge", stream: `order/${n}`, payload: { n }, notBefore: 1 },
  ],
  inbox: { consumer: `order/${n}`, messageId: `place-${n}`, reply: { ok: n } },
  now: 1,
});

describe("sqlite group commit", () => {
  it("answers refusals in one batch without undoing the others", async () => {
    const journal = sqliteJournal({ path: join(dir, "refusals.db") });
    await journal.migrate();
    try {
      await journal.commit(order(1));
      const outcomes = await Promise.allSettled([
        journal.commit(order(2)),
        journal.commit({ ...order(1), inbox: { consumer: "x", messageId: "y", reply: 0 } }),
        journal.commit({ ...order(3), inbox: { consumer: "order/1", messageId: "place-1", reply: 0 } }),
        journal.commit({
          ...order(4),
          outbox: [
            { id: "charge-2", category: "effect", kind: "charge", stream: "order/4", payload: {}, notBefore: 1 },
          ],
        }),
        journal.commit(order(5)),
      ]);
      expect(journal.groupCommitStats.largest).toBe(5);
      expect(outcomes.map((o) => o.status)).toEqual(["fulfilled", "rejected", "rejected", "rejected", "fulfilled"]);
      const reasons = outcomes.map((o) => (o.status === "rejected" ? o.reason : undefined));
      expect(reasons[1]).toBeInstanceOf(VersionConflictError);
      expect(reasons[2]).toBeInstanceOf(DuplicateMessageError);
      expect(reasons[3]).toBeInstanceOf(IdempotencyKeyReusedError);
      for (const n of [3, 4]) expect(await journal.streamVersion(`order/${n}`)).toBe(0);
      expect(await journal.getInbox("x", "y")).toBeUndefined();
      for (const n of [2, 5]) expect(await journal.streamVersion(`order/${n}`)).toBe(1);
    } finally {
      await journal.close();
    }
  });

  it("applies the batch again with savepoints when a write fails part-way, so only that commit fails", async () => {
    const journal = sqliteJournal({ path: join(dir, "partial.db") });
    await journal.migrate();
    try {
      await journal.commit(order(1, "used"));
      // Order 7's second event reuses an event id: its first event was written when that fails.
      const twice: Commit = {
        ...order(7),
        events: [
          { eventId: "fresh-7", type: "Placed", data: {} },
          { eventId: "used", type: "Placed", data: {} },
        ],
      };
      const outcomes = await Promise.allSettled([
        journal.commit(order(6)),
        journal.commit(twice),
        journal.commit(order(8)),
      ]);
      expect(journal.groupCommitStats.largest).toBe(3);
      expect(outcomes.map((o) => o.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
      expect((outcomes[1] as PromiseRejectedResult).reason).toBeInstanceOf(InvalidInputError);
      expect(await journal.readStream("order/7")).toEqual([]);
      expect(await journal.getOutbox("charge-7")).toBeUndefined();
      expect(await journal.getInbox("order/7", "place-7")).toBeUndefined();
      for (const n of [6, 8]) {
        expect(await journal.streamVersion(`order/${n}`)).toBe(1);
        expect(await journal.getOutbox(`charge-${n}`)).toMatchObject({ status: "pending" });
      }
    } finally {
      await journal.close();
    }
  });
});
