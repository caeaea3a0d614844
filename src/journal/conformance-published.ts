import { CheckpointConflictError } from "../base/errors.js";
import type { ConformanceTestApi } from "./conformance-api.js";
import { PUBLISHED_READER_SOURCE } from "./published.js";
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
        { position: a, ...entry("a"), publishedAt: T0 },
        { position: b, ...entry("b"), publishedAt: T0 + 1 },
        { position: c, ...entry("c"), publishedAt: T0 + 2 },
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
  });
}
