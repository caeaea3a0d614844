import { type ConformanceContext, outboxRow, T0 } from "./conformance-fixtures.js";

/** Dead letters, and the summary of what is still open. Run by `journalConformance` on every back end. */
export function deadLetterConformance(ctx: ConformanceContext): void {
  const { describe, it, expect } = ctx.api;
  describe("dead letters", () => {
    it("inserts once, lists by filter in failure order, gets and resolves once", async () => {
      const j = ctx.journal();
      const letter = (id: string, consumer: string, at: number) => ({
        id,
        consumer,
        messageId: `msg-${id}`,
        payload: { id, list: [1, 2] },
        error: "handler failed",
        stack: "Error: handler failed\n    at x",
        attempts: 3,
        firstFailedAt: at,
        lastFailedAt: at + 100,
      });
      await j.commit({
        deadLetters: [letter("d2", "c1", T0 + 5), letter("d1", "c1", T0 + 5), letter("d3", "c2", T0)],
        now: T0,
      });
      await j.commit({ deadLetters: [{ ...letter("d1", "c9", T0), error: "other" }], now: T0 + 1 });
      expect((await j.listDeadLetters()).map((d) => d.id)).toEqual(["d3", "d1", "d2"]);
      expect((await j.listDeadLetters({ consumer: "c1" })).map((d) => d.id)).toEqual(["d1", "d2"]);
      expect((await j.listDeadLetters({ limit: 1 })).map((d) => d.id)).toEqual(["d3"]);
      expect(await j.getDeadLetter("d1")).toEqual({
        ...letter("d1", "c1", T0 + 5),
        status: "open",
        resolvedAt: null,
      });
      expect(await j.resolveDeadLetter("d1", "replayed", T0 + 50)).toBe(true);
      expect(await j.resolveDeadLetter("d1", "discarded", T0 + 60)).toBe(false);
      expect(await j.resolveDeadLetter("missing", "discarded", T0 + 60)).toBe(false);
      expect(await j.getDeadLetter("d1")).toMatchObject({ status: "replayed", resolvedAt: T0 + 50 });
      expect((await j.listDeadLetters({ status: "open" })).map((d) => d.id)).toEqual(["d3", "d2"]);
      expect((await j.listDeadLetters({ status: "replayed", consumer: "c1" })).map((d) => d.id)).toEqual(["d1"]);
      expect(await j.getDeadLetter("missing")).toBeUndefined();
    });
  });

  describe("summary", () => {
    it("counts open outbox rows per category, kind and status with the oldest, and parked and open dead letters per consumer", async () => {
      const j = ctx.journal();
      expect(await j.summarize()).toEqual({ outbox: [], parked: [], deadLetters: [] });
      await j.commit({
        outbox: [outboxRow("p1"), outboxRow("p2"), outboxRow("s1", { kind: "shipment" })],
        now: T0 + 10,
      });
      await j.commit({
        outbox: [outboxRow("p3"), outboxRow("e1", { category: "event", kind: "OrderPlaced" }), outboxRow("x1")],
        now: T0 + 20,
      });
      expect(await j.forceOutbox("p3", { status: "reconcile" }, T0 + 30)).toBe(true);
      await j.commit({ outboxDone: [{ id: "x1", outcome: "completed" }], now: T0 + 40 });
      const letter = (id: string, consumer: string, at: number) => ({
        id,
        consumer,
        messageId: id,
        payload: null,
        error: "failed",
        stack: null,
        attempts: 1,
        firstFailedAt: at,
        lastFailedAt: at,
      });
      await j.commit({
        park: [
          { consumer: "seq-b", source: "s", version: 3, message: null },
          { consumer: "seq-a", source: "s", version: 5, message: null },
        ],
        deadLetters: [letter("d1", "c1", T0 + 7), letter("d2", "c1", T0 + 3), letter("d3", "c2", T0 + 9)],
        now: T0 + 50,
      });
      await j.commit({ park: [{ consumer: "seq-a", source: "t", version: 2, message: null }], now: T0 + 60 });
      await j.resolveDeadLetter("d3", "discarded", T0 + 70);
      expect(await j.summarize()).toEqual({
        outbox: [
          { category: "effect", kind: "payment", status: "pending", count: 2, oldestCreatedAt: T0 + 10 },
          { category: "effect", kind: "payment", status: "reconcile", count: 1, oldestCreatedAt: T0 + 20 },
          { category: "effect", kind: "shipment", status: "pending", count: 1, oldestCreatedAt: T0 + 10 },
          { category: "event", kind: "OrderPlaced", status: "pending", count: 1, oldestCreatedAt: T0 + 20 },
        ],
        parked: [
          { consumer: "seq-a", count: 2, oldestParkedAt: T0 + 50 },
          { consumer: "seq-b", count: 1, oldestParkedAt: T0 + 50 },
        ],
        deadLetters: [{ consumer: "c1", count: 2, oldestFailedAt: T0 + 3 }],
      });
    });
  });
}
