import { IdempotencyKeyReusedError, InvalidInputError } from "../base/errors.js";
import { DEFAULT_SLICE_COUNT } from "../core/slices.js";
import { type ConformanceContext, outboxRow, T0 } from "./conformance-fixtures.js";
import { outboxSlice } from "./outbox-slice.js";
import type { Journal } from "./types.js";

/** Outbox rows updated under a lease, forced, listed, woken on, and pruned when done. Run by `journalConformance` on every back end. */
export function outboxConformance(ctx: ConformanceContext): void {
  const { describe, it, expect } = ctx.api;
  const { events } = ctx;
  describe("outbox", () => {
    it("updates a row only for its lease owner, and never a done row", async () => {
      const j = ctx.journal();
      await j.commit({ outbox: [outboxRow("k1")], now: T0 });
      await j.claimOutbox({ owner: "d1", now: T0, leaseMs: 100, limit: 1 });
      expect(await j.updateOutbox("k1", "d2", { attempts: 5 }, T0 + 1)).toBe(false);
      expect(await j.updateOutbox("missing", "d1", { attempts: 5 }, T0 + 1)).toBe(false);
      expect(await j.updateOutbox("k1", "d1", { attempts: 1, lastError: "timeout", releaseLease: false }, T0 + 2)).toBe(
        true,
      );
      expect(await j.getOutbox("k1")).toMatchObject({
        attempts: 1,
        lastError: "timeout",
        leaseOwner: "d1",
        leaseUntil: T0 + 100,
        updatedAt: T0 + 2,
      });
      expect(
        await j.updateOutbox(
          "k1",
          "d1",
          { status: "resolving", notBefore: T0 + 50, result: { partial: [1] }, outcome: "maybe" },
          T0 + 3,
        ),
      ).toBe(true);
      expect(await j.getOutbox("k1")).toMatchObject({
        status: "resolving",
        attempts: 1,
        notBefore: T0 + 50,
        lastError: "timeout",
        result: { partial: [1] },
        outcome: "maybe",
        leaseOwner: null,
        leaseUntil: null,
        updatedAt: T0 + 3,
      });
      expect(await j.updateOutbox("k1", "d1", { attempts: 2 }, T0 + 4)).toBe(false);
      await j.claimOutbox({ owner: "d1", now: T0 + 60, leaseMs: 100, limit: 1, statuses: ["resolving"] });
      expect(await j.updateOutbox("k1", "d1", { lastError: null, result: null }, T0 + 61)).toBe(true);
      expect(await j.getOutbox("k1")).toMatchObject({ lastError: null, result: null });
      expect(await j.forceOutbox("k1", { status: "done", outcome: "settled" }, T0 + 62)).toBe(true);
      expect(await j.forceOutbox("k1", { status: "pending" }, T0 + 63)).toBe(false);
      await j.claimOutbox({ owner: "d1", now: T0 + 70, leaseMs: 100, limit: 1, statuses: ["done"] });
      expect(await j.updateOutbox("k1", "d1", { status: "pending" }, T0 + 71)).toBe(false);
      expect((await j.getOutbox("k1"))?.status).toBe("done");
    });

    it("marks rows done in a commit, keeping the first outcome", async () => {
      const j = ctx.journal();
      await j.commit({ outbox: [outboxRow("k1"), outboxRow("k2")], now: T0 });
      await j.claimOutbox({ owner: "d1", now: T0, leaseMs: 100, limit: 1 });
      await j.commit({
        outboxDone: [
          { id: "k1", outcome: "completed", result: { paymentId: "p-1" } },
          { id: "nope", outcome: "x" },
        ],
        now: T0 + 1,
      });
      await j.commit({
        outboxDone: [
          { id: "k1", outcome: "failed", result: { error: "late" } },
          { id: "k2", outcome: "completed" },
        ],
        now: T0 + 2,
      });
      expect(await j.getOutbox("k1")).toMatchObject({
        status: "done",
        outcome: "completed",
        result: { paymentId: "p-1" },
        leaseOwner: null,
        leaseUntil: null,
        updatedAt: T0 + 1,
      });
      expect(await j.getOutbox("k2")).toMatchObject({
        status: "done",
        outcome: "completed",
        result: null,
        updatedAt: T0 + 2,
      });
      expect(await j.getOutbox("nope")).toBeUndefined();
      expect(await j.claimOutbox({ owner: "d9", now: T0 + 10_000, leaseMs: 100, limit: 10 })).toEqual([]);
    });

    it("lists rows by status, category, kind and stream, in order, with a limit", async () => {
      const j = ctx.journal();
      await j.commit({
        outbox: [
          outboxRow("p1", { stream: "order/1" }),
          outboxRow("m1", { category: "message", kind: "warehouse", stream: "order/2" }),
          outboxRow("p2", { stream: "order/2" }),
          outboxRow("v1", { category: "event", kind: "OrderPlaced", stream: "order/1" }),
        ],
        now: T0,
      });
      await j.forceOutbox("p2", { status: "reconcile" }, T0 + 1);
      const ids = async (f: Parameters<Journal["listOutbox"]>[0]) => (await j.listOutbox(f)).map((r) => r.id);
      expect(await ids({})).toEqual(["p1", "m1", "p2", "v1"]);
      expect(await ids({ status: "pending" })).toEqual(["p1", "m1", "v1"]);
      expect(await ids({ status: ["reconcile", "done"] })).toEqual(["p2"]);
      expect(await ids({ category: "effect" })).toEqual(["p1", "p2"]);
      expect(await ids({ kind: "warehouse" })).toEqual(["m1"]);
      expect(await ids({ stream: "order/1" })).toEqual(["p1", "v1"]);
      expect(await ids({ stream: "order/1", category: "event", status: "pending" })).toEqual(["v1"]);
      expect(await ids({ limit: 2 })).toEqual(["p1", "m1"]);
    });

    it("forces a change without a lease, releasing any lease", async () => {
      const j = ctx.journal();
      await j.commit({ outbox: [outboxRow("k1")], now: T0 });
      await j.claimOutbox({ owner: "d1", now: T0, leaseMs: 1_000, limit: 1 });
      expect(
        await j.forceOutbox("k1", { status: "pending", notBefore: T0 + 5, attempts: 0, releaseLease: false }, T0 + 1),
      ).toBe(true);
      expect(await j.getOutbox("k1")).toMatchObject({
        status: "pending",
        notBefore: T0 + 5,
        leaseOwner: null,
        leaseUntil: null,
        updatedAt: T0 + 1,
      });
      expect((await j.claimOutbox({ owner: "d2", now: T0 + 5, leaseMs: 10, limit: 1 })).map((r) => r.id)).toEqual([
        "k1",
      ]);
      expect(await j.forceOutbox("missing", { status: "pending" }, T0)).toBe(false);
    });

    it("wakes outbox listeners after a commit that added rows", async () => {
      const j = ctx.journal();
      let calls = 0;
      const woke = new Promise<void>((resolve) => {
        const off = j.onOutbox(() => {
          calls++;
          off();
          resolve();
        });
      });
      await j.commit({ stream: "order/1", events: events(1), outbox: [outboxRow("wake")], now: T0 });
      await woke;
      expect(calls).toBe(1);
      let after = 0;
      const off = j.onOutbox(() => after++);
      off();
      await j.commit({ outbox: [outboxRow("wake-2")], now: T0 });
      await new Promise((r) => setTimeout(r, 50));
      expect(after).toBe(0);
    });

    it("wakes a listener that names categories for rows of those due now, and for any update back to pending", async () => {
      const j = ctx.journal();
      const woke = { served: 0, events: 0, all: 0 };
      // No category: woken only when what changed is not known (a waiter that hears this process's writes otherwise).
      let unknownOnly = 0;
      const offs = [
        j.onOutbox(() => woke.served++, ["effect", "message"]),
        j.onOutbox(() => woke.events++, ["event"]),
        j.onOutbox(() => woke.all++),
        j.onOutbox(() => unknownOnly++, []),
      ];
      const settle = () => new Promise((r) => setTimeout(r, 100));
      try {
        // An event for a relay: a dispatcher serving effects and messages has nothing to claim.
        await j.commit({ outbox: [outboxRow("published", { category: "event", kind: "Placed" })], now: T0 });
        await settle();
        expect(woke.served).toBe(0);
        expect(woke.events > 0).toBe(true);
        expect(woke.all > 0).toBe(true);
        // A row due later (a durable timer) is for the claimer's poll: nobody is woken now.
        woke.events = 0;
        woke.all = 0;
        await j.commit({ outbox: [outboxRow("later", { notBefore: T0 + 60_000 })], now: T0 });
        await settle();
        expect(woke).toEqual({ served: 0, events: 0, all: 0 });
        await j.commit({ outbox: [outboxRow("message", { category: "message", kind: "shipment" })], now: T0 });
        await settle();
        expect(woke.served > 0).toBe(true);
        expect(woke.events).toBe(0);
        expect(unknownOnly).toBe(0);
        // An update does not say the row's category: every listener looks.
        const [claimed] = await j.claimOutbox({ owner: "d#1", now: T0, leaseMs: 1_000, limit: 1 });
        expect(claimed?.id).toBe("published");
        woke.served = 0;
        expect(await j.updateOutbox("published", "d#1", { attempts: 1, releaseLease: true }, T0 + 1)).toBe(true);
        await settle();
        expect(woke.served > 0).toBe(true);
        expect(woke.events > 0).toBe(true);
        expect(unknownOnly > 0).toBe(true);
      } finally {
        for (const off of offs) off();
      }
    });

    it("wakes a listener that names the slices it owns for rows of those only (a worker holding some slices)", async () => {
      const j = ctx.journal();
      const count = j.sliceCount ?? DEFAULT_SLICE_COUNT;
      const first = outboxSlice(outboxRow("x", { stream: "order/1" }), count);
      let n = 2;
      while (outboxSlice(outboxRow("x", { stream: `order/${n}` }), count) === first) n++;
      const woke = { first: 0, rest: 0, every: 0 };
      const offs = [
        j.onOutbox(
          () => woke.first++,
          ["effect", "message"],
          (slice) => slice === first,
        ),
        j.onOutbox(
          () => woke.rest++,
          ["effect", "message"],
          (slice) => slice !== first,
        ),
        j.onOutbox(() => woke.every++, ["effect", "message"]),
      ];
      const settle = () => new Promise((r) => setTimeout(r, 100));
      try {
        await j.commit({ outbox: [outboxRow("first", { stream: "order/1" })], now: T0 });
        await settle();
        expect(woke).toEqual({ first: 1, rest: 0, every: 1 });
        // A message belongs to its receiver's slice, not its sender's.
        const message = outboxRow("to-rest", { category: "message", stream: "order/1", payload: { to: `order/${n}` } });
        await j.commit({ outbox: [message], now: T0 });
        await settle();
        expect(woke).toEqual({ first: 1, rest: 1, every: 2 });
        // An update does not say the row's slice: every listener looks.
        const [claimed] = await j.claimOutbox({ owner: "d#1", now: T0, leaseMs: 1_000, limit: 1 });
        expect(claimed?.id).toBe("first");
        expect(await j.updateOutbox("first", "d#1", { attempts: 1, releaseLease: true }, T0 + 1)).toBe(true);
        await settle();
        expect(woke).toEqual({ first: 2, rest: 2, every: 3 });
      } finally {
        for (const off of offs) off();
      }
    });
  });

  describe("outbox retention", () => {
    /** One row in every status, each last changed at T0 (long before the prune time used below). */
    const everyStatus = async () => {
      const ids = ["pending", "leased", "resolving", "reconcile", "dead", "done-old", "done-edge", "done-young"];
      await ctx.journal().commit({ outbox: ids.map((id) => outboxRow(id)), now: T0 });
      // Claim the first two rows, then release "pending" again: "leased" stays held by d1.
      await ctx.journal().claimOutbox({ owner: "d1", now: T0, leaseMs: 1_000_000, limit: 2 });
      await ctx.journal().forceOutbox("pending", { status: "pending" }, T0);
      await ctx.journal().forceOutbox("resolving", { status: "resolving" }, T0);
      await ctx.journal().forceOutbox("reconcile", { status: "reconcile" }, T0);
      await ctx.journal().forceOutbox("dead", { status: "dead", lastError: "gave up" }, T0);
      await ctx.journal().commit({ outboxDone: [{ id: "done-old", outcome: "completed" }], now: T0 + 5 });
      await ctx.journal().commit({ outboxDone: [{ id: "done-edge", outcome: "completed" }], now: T0 + 10 });
      await ctx.journal().forceOutbox("done-young", { status: "done", outcome: "settled" }, T0 + 11);
      return ids;
    };

    it("deletes only done rows changed strictly before the time, and says how many", async () => {
      const j = ctx.journal();
      const ids = await everyStatus();
      expect((await j.getOutbox("leased"))?.leaseOwner).toBe("d1");
      expect(await j.pruneOutbox(T0 + 10)).toBe(1);
      expect(await j.getOutbox("done-old")).toBeUndefined();
      const left = (await j.listOutbox({})).map((r) => [r.id, r.status]);
      expect(left).toEqual([
        ["pending", "pending"],
        ["leased", "pending"],
        ["resolving", "resolving"],
        ["reconcile", "reconcile"],
        ["dead", "dead"],
        ["done-edge", "done"],
        ["done-young", "done"],
      ]);
      expect(await j.pruneOutbox(T0 + 10)).toBe(0);
      // Far in the future: only done rows go, however old the others are.
      expect(await j.pruneOutbox(T0 + 1_000_000_000)).toBe(2);
      expect((await j.listOutbox({})).map((r) => r.id)).toEqual(ids.slice(0, 5));
    });

    it("deletes in batches of at most `limit` rows", async () => {
      const j = ctx.journal();
      const ids = Array.from({ length: 5 }, (_, i) => `old-${i}`);
      await j.commit({ outbox: ids.map((id) => outboxRow(id)), now: T0 });
      await j.commit({ outboxDone: ids.map((id) => ({ id, outcome: "completed" })), now: T0 });
      expect(await j.pruneOutbox(T0 + 1, 2)).toBe(2);
      expect(await j.pruneOutbox(T0 + 1, 2)).toBe(2);
      expect(await j.pruneOutbox(T0 + 1, 2)).toBe(1);
      expect(await j.pruneOutbox(T0 + 1, 2)).toBe(0);
      expect(await j.listOutbox({})).toEqual([]);
    });

    it("refuses a limit that is not a positive integer", async () => {
      const j = ctx.journal();
      for (const limit of [0, -1, 1.5, Number.NaN]) {
        await expect(j.pruneOutbox(T0, limit)).rejects.toBeInstanceOf(InvalidInputError);
      }
    });

    it("forgets a pruned key: inserting it again makes a new pending row", async () => {
      const j = ctx.journal();
      await j.commit({ outbox: [outboxRow("k1")], now: T0 });
      await j.commit({ outboxDone: [{ id: "k1", outcome: "completed" }], now: T0 + 1 });
      const reused = j.commit({ outbox: [outboxRow("k1", { payload: { again: true } })], now: T0 + 2 });
      expect(await reused.catch((e: unknown) => e)).toBeInstanceOf(IdempotencyKeyReusedError);
      expect(await j.getOutbox("k1")).toMatchObject({ status: "done", payload: { id: "k1" } });
      expect(await j.pruneOutbox(T0 + 2)).toBe(1);
      await j.commit({ outbox: [outboxRow("k1", { payload: { again: true } })], now: T0 + 3 });
      expect(await j.getOutbox("k1")).toMatchObject({ status: "pending", payload: { again: true } });
    });
  });
}
