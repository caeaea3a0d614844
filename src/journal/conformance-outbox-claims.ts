import { type ConformanceContext, outboxRow, T0 } from "./conformance-fixtures.js";

/** Outbox rows inserted, leased at commit or claimed: never held by two workers at once. Run by `journalConformance` on every back end. */
export function outboxClaimConformance(ctx: ConformanceContext): void {
  const { describe, it, expect } = ctx.api;
  const { events } = ctx;
  describe("rows handed over at commit (inserted leased)", () => {
    it("reports the rows it inserted with their seq, never a row whose id was already there", async () => {
      const j = ctx.journal();
      await j.commit({ outbox: [outboxRow("k0")], now: T0 });
      const result = await j.commit({ outbox: [outboxRow("k1"), outboxRow("k0"), outboxRow("k2")], now: T0 });
      const rows = await j.listOutbox();
      const seq = (id: string) => rows.find((r) => r.id === id)?.seq;
      expect(result.inserted).toEqual([
        { id: "k1", seq: seq("k1") },
        { id: "k2", seq: seq("k2") },
      ]);
    });

    it("reports a row listed twice in one commit once, as it inserted it once", async () => {
      const j = ctx.journal();
      // Actor commits (a stream, an event) beside another, as group commit batches them: on
      // PostgreSQL that is the set path, whose answer the client completes (`applied`).
      const [result] = await Promise.all([
        j.commit({
          stream: "dup/1",
          expectedVersion: 0,
          events: events(1, "dup"),
          outbox: [outboxRow("t1"), outboxRow("t2"), outboxRow("t1")],
          now: T0,
        }),
        j.commit({
          stream: "dup/2",
          expectedVersion: 0,
          events: events(1, "dup2"),
          outbox: [outboxRow("t3")],
          now: T0,
        }),
      ]);
      const rows = await j.listOutbox();
      expect(rows.filter((r) => r.id === "t1")).toHaveLength(1);
      const seq = (id: string) => rows.find((r) => r.id === id)?.seq;
      expect(result.inserted).toEqual([
        { id: "t1", seq: seq("t1") },
        { id: "t2", seq: seq("t2") },
      ]);
    });

    it("stores the lease (and the holder's first write), so no one claims the row before it ends", async () => {
      const j = ctx.journal();
      const lease = { owner: "w1#7.x", until: T0 + 1_000, attempts: 1, result: { lastRunAt: T0 } };
      await j.commit({ outbox: [outboxRow("held", { lease }), outboxRow("free")], now: T0 });
      expect(await j.getOutbox("held")).toMatchObject({
        status: "pending",
        leaseOwner: "w1#7.x",
        leaseUntil: T0 + 1_000,
        attempts: 1,
        result: { lastRunAt: T0 },
      });
      const early = await j.claimOutbox({ owner: "w2", now: T0 + 999, leaseMs: 100, limit: 10 });
      expect(early.map((r) => r.id)).toEqual(["free"]);
      expect(await j.updateOutbox("held", "w1#7.x", { attempts: 2, releaseLease: false }, T0 + 5)).toBe(true);
      const late = await j.claimOutbox({ owner: "w2", now: T0 + 1_000, leaseMs: 100, limit: 10 });
      expect(late.map((r) => r.id)).toEqual(["held"]);
      expect(await j.updateOutbox("held", "w1#7.x", { attempts: 3 }, T0 + 1_001)).toBe(false);
    });

    it("wakes no outbox listener for a commit whose rows were all handed over", async () => {
      const j = ctx.journal();
      let calls = 0;
      const off = j.onOutbox(() => calls++);
      const lease = { owner: "w1#1.a", until: T0 + 1_000 };
      await j.commit({ stream: "order/1", events: events(1), outbox: [outboxRow("quiet", { lease })], now: T0 });
      await new Promise((r) => setTimeout(r, 50));
      expect(calls).toBe(0);
      await j.commit({ outbox: [outboxRow("loud")], now: T0 });
      await new Promise((r) => setTimeout(r, 50));
      off();
      expect(calls > 0).toBe(true);
    });
  });

  describe("outbox", () => {
    it("inserts rows if absent: the same id twice is a no-op that keeps the first row", async () => {
      const j = ctx.journal();
      await j.commit({ outbox: [outboxRow("k1", { payload: { first: true } })], now: T0 });
      // The same request again (same stream, kind and input; another notBefore) is a no-op.
      await j.commit({ outbox: [outboxRow("k1", { payload: { first: true }, notBefore: T0 + 50 })], now: T0 + 9 });
      const row = await j.getOutbox("k1");
      expect(row).toMatchObject({
        id: "k1",
        category: "effect",
        kind: "payment",
        stream: "order/1",
        payload: { first: true },
        notBefore: T0,
        status: "pending",
        attempts: 0,
        leaseOwner: null,
        leaseUntil: null,
        lastError: null,
        outcome: null,
        result: null,
        createdAt: T0,
        updatedAt: T0,
      });
      expect(await j.listOutbox()).toHaveLength(1);
      expect(await j.getOutbox("missing")).toBeUndefined();
    });

    it("numbers rows in insertion order", async () => {
      const j = ctx.journal();
      await j.commit({ outbox: [outboxRow("c"), outboxRow("a")], now: T0 });
      await j.commit({ outbox: [outboxRow("b")], now: T0 });
      const rows = await j.listOutbox();
      expect(rows.map((r) => r.id)).toEqual(["c", "a", "b"]);
      const seqs = rows.map((r) => r.seq);
      expect([...seqs].sort((x, y) => x - y)).toEqual(seqs);
      expect(new Set(seqs).size).toBe(3);
    });

    it("claims due rows with a lease; others get nothing until the lease expires", async () => {
      const subject = ctx.subject();
      const j = ctx.journal();
      await j.commit({
        outbox: [outboxRow("k1"), outboxRow("k2"), outboxRow("later", { notBefore: T0 + 1_000 })],
        now: T0,
      });
      const claimed = await j.claimOutbox({ owner: "d1", now: T0 + 10, leaseMs: 100, limit: 10 });
      expect(claimed.map((r) => r.id)).toEqual(["k1", "k2"]);
      expect(claimed[0]).toMatchObject({
        leaseOwner: "d1",
        leaseUntil: T0 + 110,
        updatedAt: T0 + 10,
        status: "pending",
      });
      const other = subject.secondWriter ? await subject.secondWriter() : j;
      expect(await other.claimOutbox({ owner: "d2", now: T0 + 50, leaseMs: 100, limit: 10 })).toEqual([]);
      expect(await j.claimOutbox({ owner: "d2", now: T0 + 109, leaseMs: 100, limit: 10 })).toEqual([]);
      const takenOver = await other.claimOutbox({ owner: "d2", now: T0 + 110, leaseMs: 100, limit: 1 });
      expect(takenOver.map((r) => [r.id, r.leaseOwner, r.leaseUntil])).toEqual([["k1", "d2", T0 + 210]]);
      expect(await j.updateOutbox("k1", "d1", { attempts: 1 }, T0 + 111)).toBe(false);
      const due = await j.claimOutbox({ owner: "d3", now: T0 + 1_000, leaseMs: 100, limit: 10 });
      expect(due.map((r) => r.id)).toEqual(["k1", "k2", "later"]);
    });

    it("never hands one row to two claimers running at once", async () => {
      const subject = ctx.subject();
      const j = ctx.journal();
      const rows = Array.from({ length: 60 }, (_, i) => outboxRow(`r${i}`, { stream: `s/${i % 7}` }));
      await j.commit({ outbox: rows, now: T0 });
      const other = subject.secondWriter ? await subject.secondWriter() : j;
      const seen = new Map<string, string>();
      for (let round = 0; round < 10; round++) {
        const batches = await Promise.all([
          j.claimOutbox({ owner: "a", now: T0 + 1, leaseMs: 60_000, limit: 4 }),
          other.claimOutbox({ owner: "b", now: T0 + 1, leaseMs: 60_000, limit: 4 }),
          j.claimOutbox({ owner: "c", now: T0 + 1, leaseMs: 60_000, limit: 4 }),
        ]);
        for (const batch of batches) {
          for (const row of batch) {
            expect(seen.has(row.id)).toBe(false);
            seen.set(row.id, row.leaseOwner as string);
          }
        }
      }
      expect(seen.size).toBe(60);
      for (const [id, owner] of seen) expect((await j.getOutbox(id))?.leaseOwner).toBe(owner);
    });

    it("filters claims by status and category, and respects the limit", async () => {
      const j = ctx.journal();
      await j.commit({
        outbox: [outboxRow("e1"), outboxRow("m1", { category: "message" }), outboxRow("v1", { category: "event" })],
        now: T0,
      });
      expect(
        (await j.claimOutbox({ owner: "d", now: T0, leaseMs: 10, limit: 10, categories: ["message", "event"] })).map(
          (r) => r.id,
        ),
      ).toEqual(["m1", "v1"]);
      expect(await j.claimOutbox({ owner: "d", now: T0, leaseMs: 10, limit: 0 })).toEqual([]);
      expect(await j.forceOutbox("e1", { status: "resolving" }, T0)).toBe(true);
      expect(await j.claimOutbox({ owner: "d", now: T0, leaseMs: 10, limit: 10 })).toEqual([]);
      expect(
        (await j.claimOutbox({ owner: "r", now: T0, leaseMs: 10, limit: 10, statuses: ["resolving"] })).map(
          (r) => r.id,
        ),
      ).toEqual(["e1"]);
      // A finished row is never claimed, even when a claim names its status.
      expect(await j.forceOutbox("m1", { status: "done", outcome: "settled" }, T0 + 20)).toBe(true);
      expect(await j.forceOutbox("v1", { status: "dead" }, T0 + 20)).toBe(true);
      expect(
        await j.claimOutbox({ owner: "x", now: T0 + 20, leaseMs: 10, limit: 10, statuses: ["done", "dead"] }),
      ).toEqual([]);
    });

    it("claims in stream order: a row waits while an earlier row of its stream and category is unfinished", async () => {
      const j = ctx.journal();
      await j.commit({
        outbox: [
          outboxRow("a1", { category: "event", stream: "order/a" }),
          outboxRow("a2", { category: "event", stream: "order/a" }),
          outboxRow("b1", { category: "event", stream: "order/b", notBefore: T0 + 500 }),
          outboxRow("b2", { category: "event", stream: "order/b" }),
          outboxRow("a-effect", { category: "effect", stream: "order/a" }),
        ],
        now: T0,
      });
      const opts = { now: T0, leaseMs: 1_000, limit: 10, inStreamOrder: true, categories: ["event" as const] };
      expect((await j.claimOutbox({ ...opts, owner: "r1" })).map((r) => r.id)).toEqual(["a1"]);
      expect(await j.claimOutbox({ ...opts, owner: "r2", now: T0 + 10 })).toEqual([]);
      // Unordered claims are not held back.
      expect(
        (await j.claimOutbox({ owner: "x", now: T0, leaseMs: 1, limit: 10, categories: ["event"] })).map((r) => r.id),
      ).toEqual(["a2", "b2"]);
      expect(await j.updateOutbox("a1", "r1", { status: "done", outcome: "published" }, T0 + 1)).toBe(true);
      expect((await j.claimOutbox({ ...opts, owner: "r1", now: T0 + 2 })).map((r) => r.id)).toEqual(["a2"]);
      expect(await j.forceOutbox("b1", { status: "dead", lastError: "gave up" }, T0 + 3)).toBe(true);
      expect((await j.claimOutbox({ ...opts, owner: "r1", now: T0 + 3 })).map((r) => r.id)).toEqual(["b2"]);
      // Any unfinished status holds later rows back, not only pending: here one waiting for reconciliation.
      await j.commit({
        outbox: [
          outboxRow("c1", { category: "event", stream: "order/c" }),
          outboxRow("c2", { category: "event", stream: "order/c" }),
        ],
        now: T0 + 4,
      });
      expect(await j.forceOutbox("c1", { status: "reconcile" }, T0 + 4)).toBe(true);
      expect(await j.claimOutbox({ ...opts, owner: "r1", now: T0 + 5 })).toEqual([]);
      expect(await j.forceOutbox("c1", { status: "done", outcome: "settled" }, T0 + 6)).toBe(true);
      expect((await j.claimOutbox({ ...opts, owner: "r1", now: T0 + 7 })).map((r) => r.id)).toEqual(["c2"]);
    });

    it("claims effects in stream order too when asked (nothing in oncely asks; a journal still answers it)", async () => {
      const j = ctx.journal();
      await j.commit({
        outbox: [
          outboxRow("e1", { category: "effect", stream: "order/e" }),
          outboxRow("e2", { category: "effect", stream: "order/e" }),
          outboxRow("m1", { category: "message", stream: "order/e" }),
        ],
        now: T0,
      });
      const opts = { now: T0, leaseMs: 1_000, limit: 10, inStreamOrder: true };
      // Each category keeps its own order: the message is not held back by the effects.
      expect((await j.claimOutbox({ ...opts, owner: "o1" })).map((r) => r.id)).toEqual(["e1", "m1"]);
      expect(await j.claimOutbox({ ...opts, owner: "o2", now: T0 + 10, categories: ["effect"] })).toEqual([]);
      expect(await j.updateOutbox("e1", "o1", { status: "done", outcome: "completed" }, T0 + 11)).toBe(true);
      expect(
        (await j.claimOutbox({ ...opts, owner: "o2", now: T0 + 12, categories: ["effect"] })).map((r) => r.id),
      ).toEqual(["e2"]);
    });
  });
}
