import { CheckpointConflictError } from "../base/errors.js";
import { sliceOf } from "../core/slices.js";
import type { ConformanceTestApi } from "./conformance-api.js";
import { PUBLISHED_READER_SOURCE, publishedSliceSource } from "./published.js";
import type { Journal, NewPublished } from "./types.js";

const T0 = 1_700_000_000_000;

const entry = (id: string): NewPublished => ({
  messageId: id,
  subject: `shop.ordering.${id}`,
  body: JSON.stringify({ eventId: id, text: '注文 🧾 \u0001 "quoted"' }),
});

/** The published log (the journal transport's log), as tests run by `journalConformance` on every back end. */
export function publishedLogConformance(api: ConformanceTestApi, journal: () => Journal): void {
  const { describe, it, expect } = api;
  describe("published log", () => {
    it("appends in position order and reads after a position, with a limit", async () => {
      const j = journal();
      const a = await j.appendPublished(entry("a"), T0);
      const b = await j.appendPublished(entry("b"), T0 + 1);
      const c = await j.appendPublished(entry("c"), T0 + 2);
      expect(a > 0).toBe(true);
      expect(b > a).toBe(true);
      expect(c > b).toBe(true);
      expect(await j.readPublished(0)).toEqual([
        { position: a, ...entry("a"), publishedAt: T0, slice: sliceOf("a", j.sliceCount ?? 64) },
        { position: b, ...entry("b"), publishedAt: T0 + 1, slice: sliceOf("b", j.sliceCount ?? 64) },
        { position: c, ...entry("c"), publishedAt: T0 + 2, slice: sliceOf("c", j.sliceCount ?? 64) },
      ]);
      expect((await j.readPublished(a)).map((p) => p.messageId)).toEqual(["b", "c"]);
      expect((await j.readPublished(0, 2)).map((p) => p.messageId)).toEqual(["a", "b"]);
      expect(await j.readPublished(c)).toEqual([]);
    });

    it("stores a message id once and answers its first position", async () => {
      const j = journal();
      const first = await j.appendPublished(entry("x"), T0);
      await j.appendPublished(entry("y"), T0);
      expect(await j.appendPublished({ ...entry("x"), body: "another body" }, T0 + 5)).toBe(first);
      const log = await j.readPublished(0);
      expect(log.map((p) => p.messageId)).toEqual(["x", "y"]);
      expect(log[0]?.body).toBe(entry("x").body);
    });

    it("positions from concurrent appends (several writers) are distinct and read back in order", async () => {
      const j = journal();
      const ids = Array.from({ length: 20 }, (_, i) => `m${i}`);
      const positions = await Promise.all(ids.map((id, i) => j.appendPublished(entry(id), T0 + i)));
      expect(new Set(positions).size).toBe(ids.length);
      const log = await j.readPublished(0);
      expect(log.map((p) => p.position)).toEqual([...positions].sort((x, y) => x - y));
    });

    it("keeps what a registered reader has not passed, and everything while no reader is registered", async () => {
      const j = journal();
      const positions: number[] = [];
      for (const id of ["p1", "p2", "p3", "p4"]) positions.push(await j.appendPublished(entry(id), T0));
      expect(await j.prunePublished(T0 + 100)).toBe(0);
      const at = (i: number) => positions[i] as number;
      const reader = (consumer: string, version: number, expected: number) =>
        j.commit({ checkpoint: { consumer, source: PUBLISHED_READER_SOURCE, version, expected }, now: T0 });
      await reader("fast", at(2), 0);
      await reader("slow", at(0), 0);
      // Not older than the time given: kept whatever the readers say.
      expect(await j.prunePublished(T0)).toBe(0);
      expect(await j.prunePublished(T0 + 100)).toBe(1);
      expect((await j.readPublished(0)).map((p) => p.messageId)).toEqual(["p2", "p3", "p4"]);
      await reader("slow", at(3), at(0));
      expect(await j.prunePublished(T0 + 100, 1)).toBe(1);
      expect(await j.prunePublished(T0 + 100)).toBe(1);
      expect((await j.readPublished(0)).map((p) => p.messageId)).toEqual(["p4"]);
      // A reader's position is a guarded checkpoint: a stale writer cannot move it back.
      await expect(reader("fast", at(1), 0)).rejects.toBeInstanceOf(CheckpointConflictError);
      expect(await j.getCheckpoint("fast", PUBLISHED_READER_SOURCE)).toBe(at(2));
    });

    it("never hands out a position again after retention, and wakes its listeners on append", async () => {
      const j = journal();
      let woken = 0;
      const off = j.onPublished(() => woken++);
      const first = await j.appendPublished(entry("old"), T0);
      await j.commit({
        checkpoint: { consumer: "r", source: PUBLISHED_READER_SOURCE, version: first, expected: 0 },
        now: T0,
      });
      expect(await j.prunePublished(T0 + 1)).toBe(1);
      const next = await j.appendPublished(entry("new"), T0 + 2);
      expect(next > first).toBe(true);
      expect((await j.readPublished(first)).map((p) => p.messageId)).toEqual(["new"]);
      // Wake-ups are asynchronous (PostgreSQL: a NOTIFY on a connection of its own).
      for (let i = 0; i < 200 && woken === 0; i++) await new Promise((resolve) => setTimeout(resolve, 10));
      expect(woken > 0).toBe(true);
      off();
    });

    it("stores each entry in its key's slice and reads only the slices asked for, in position order", async () => {
      const j = journal();
      const count = j.sliceCount ?? 64;
      // Keys of two different slices, found by the hash (stable: sliceOf never changes).
      const keys = Array.from({ length: 200 }, (_, i) => `order-${i}`);
      const k1 = keys[0] as string;
      const k2 = keys.find((k) => sliceOf(k, count) !== sliceOf(k1, count)) as string;
      const [s1, s2] = [sliceOf(k1, count), sliceOf(k2, count)];
      const at: number[] = [];
      for (const [id, key] of [
        ["x1", k1],
        ["y1", k2],
        ["x2", k1],
        ["y2", k2],
        ["x3", k1],
      ] as const) {
        at.push(await j.appendPublished({ ...entry(id), key }, T0));
      }
      const all = await j.readPublished(0);
      expect(all.map((p) => [p.messageId, p.slice])).toEqual([
        ["x1", s1],
        ["y1", s2],
        ["x2", s1],
        ["y2", s2],
        ["x3", s1],
      ]);
      expect((await j.readPublished(0, undefined, [s1])).map((p) => p.messageId)).toEqual(["x1", "x2", "x3"]);
      expect((await j.readPublished(at[0] as number, 1, [s2])).map((p) => p.messageId)).toEqual(["y1"]);
      expect((await j.readPublished(0, undefined, [s2, s1])).map((p) => p.messageId)).toEqual([
        "x1",
        "y1",
        "x2",
        "y2",
        "x3",
      ]);
      expect(await j.readPublished(0, undefined, [])).toEqual([]);
      await expect(j.readPublished(0, undefined, [count])).rejects.toThrow(/slices must be integers from 0/);
    });

    it("keeps an entry until every reader passed it in its slice: a reader's slice position or its whole position", async () => {
      const j = journal();
      const count = j.sliceCount ?? 64;
      const keys = Array.from({ length: 200 }, (_, i) => `k-${i}`);
      const k1 = keys[0] as string;
      const k2 = keys.find((k) => sliceOf(k, count) !== sliceOf(k1, count)) as string;
      const [s1, s2] = [sliceOf(k1, count), sliceOf(k2, count)];
      const a = await j.appendPublished({ ...entry("pa"), key: k1 }, T0);
      const b = await j.appendPublished({ ...entry("pb"), key: k2 }, T0);
      const c = await j.appendPublished({ ...entry("pc"), key: k1 }, T0);
      // "whole" has read everything; "sliced" registered at 0 and passed slice s1 up to c, slice s2 not at all.
      await j.commit({
        checkpoints: [
          { consumer: "whole", source: PUBLISHED_READER_SOURCE, version: c, expected: 0 },
          { consumer: "sliced", source: PUBLISHED_READER_SOURCE, version: 0, expected: 0 },
          { consumer: "sliced", source: publishedSliceSource(s1), version: c, expected: 0 },
        ],
        now: T0,
      });
      expect(await j.prunePublished(T0 + 1)).toBe(2);
      expect((await j.readPublished(0)).map((p) => p.messageId)).toEqual(["pb"]);
      expect((await j.readPublished(0))[0]?.position).toBe(b);
      await j.commit({
        checkpoint: { consumer: "sliced", source: publishedSliceSource(s2), version: a, expected: 0 },
        now: T0,
      });
      expect(await j.prunePublished(T0 + 1)).toBe(0);
      await j.commit({
        checkpoint: { consumer: "sliced", source: publishedSliceSource(s2), version: b, expected: a },
        now: T0,
      });
      expect(await j.prunePublished(T0 + 1)).toBe(1);
      // Forgetting a consumer but its reader keeps its slice positions too.
      await j.forgetConsumer("sliced", { keepReader: true });
      expect(await j.getCheckpoint("sliced", publishedSliceSource(s2))).toBe(b);
      await j.forgetConsumer("sliced");
      expect(await j.getCheckpoint("sliced", publishedSliceSource(s2))).toBe(0);
    });
  });
}
