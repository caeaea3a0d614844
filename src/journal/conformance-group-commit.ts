import { DuplicateMessageError, IdempotencyKeyReusedError, VersionConflictError } from "../base/errors.js";
import { type ConformanceContext, outboxRow, T0 } from "./conformance-fixtures.js";
import type { Commit } from "./types.js";

/** Commits sent together (group commit): each keeps its own fate. Run by `journalConformance` on every back end. */
export function groupCommitConformance(ctx: ConformanceContext): void {
  const { describe, it, expect } = ctx.api;
  const { events, fullCommit, expectNothingOf } = ctx;
  describe("commits sent together (group commit)", () => {
    /** Settle every commit, in submit order: a batch must give each its own fate. */
    const together = (commits: Commit[]) => Promise.allSettled(commits.map((c) => ctx.journal().commit(c)));

    it("fails only the commit of a batch that reuses an effect key", async () => {
      const j = ctx.journal();
      await j.commit({ outbox: [outboxRow("taken:effect", { stream: "order/9" })], now: T0 });
      const reuse = fullCommit("order/3", 0, "reuse");
      reuse.outbox = [outboxRow("taken:effect", { stream: "order/3" })];
      const [a, reused, b] = await together([fullCommit("order/1", 0, "a"), reuse, fullCommit("order/2", 0, "b")]);
      expect(a?.status).toBe("fulfilled");
      expect(b?.status).toBe("fulfilled");
      expect(reused?.status === "rejected" && reused.reason).toBeInstanceOf(IdempotencyKeyReusedError);
      await expectNothingOf("order/3", "reuse", 0);
    });

    it("gives each commit of a batch its own fate: one conflicts, the others land", async () => {
      const j = ctx.journal();
      await j.commit({ stream: "order/9", expectedVersion: 0, events: events(1), now: T0 });
      const [a, stale, b] = await together([
        fullCommit("order/1", 0, "a"),
        fullCommit("order/9", 0, "stale"),
        fullCommit("order/2", 0, "b"),
      ]);
      expect(a).toMatchObject({ status: "fulfilled", value: { version: 2 } });
      expect(b).toMatchObject({ status: "fulfilled", value: { version: 2 } });
      expect(stale?.status).toBe("rejected");
      expect((stale as PromiseRejectedResult).reason).toBeInstanceOf(VersionConflictError);
      await expectNothingOf("order/9", "stale", 1);
      expect(await j.getInbox("order/1", "a:msg")).toMatchObject({ reply: { ok: "a" } });
      expect(await j.getOutbox("b:effect")).toMatchObject({ status: "pending" });
      expect(await j.getDocument("orders", "b:doc")).toMatchObject({ doc: { tag: "b" } });
    });

    it("fails only the commit whose message id is a duplicate, in the batch or before it", async () => {
      const j = ctx.journal();
      await j.commit({ inbox: { consumer: "order/3", messageId: "old:msg", reply: "first" }, now: T0 });
      const first = fullCommit("order/1", 0, "twice");
      const second = { ...fullCommit("order/2", 0, "twice-again"), inbox: first.inbox };
      const old = {
        ...fullCommit("order/3", 0, "old"),
        inbox: { consumer: "order/3", messageId: "old:msg", reply: 2 },
      };
      const [one, two, three, other] = await together([first, second, old, fullCommit("order/4", 0, "other")]);
      expect(one?.status).toBe("fulfilled");
      expect((two as PromiseRejectedResult).reason).toBeInstanceOf(DuplicateMessageError);
      expect((three as PromiseRejectedResult).reason).toBeInstanceOf(DuplicateMessageError);
      expect(other?.status).toBe("fulfilled");
      await expectNothingOf("order/2", "twice-again", 0, true);
      await expectNothingOf("order/3", "old", 0, true);
      expect(await j.getInbox("order/1", "twice:msg")).toMatchObject({ reply: { ok: "twice" } });
      expect(await j.getInbox("order/3", "old:msg")).toMatchObject({ reply: "first" });
    });

    it("applies the same stream twice in a batch in submit order: the second sees the first", async () => {
      const j = ctx.journal();
      const [a, conflicting, b] = await together([
        { stream: "order/1", expectedVersion: 0, events: events(2, "a"), now: T0 },
        { stream: "order/1", expectedVersion: 0, events: events(1, "lost"), now: T0 },
        { stream: "order/1", expectedVersion: 2, events: events(1, "b"), now: T0 },
      ]);
      expect(a).toMatchObject({ status: "fulfilled", value: { version: 2 } });
      expect((conflicting as PromiseRejectedResult).reason).toMatchObject({ expectedVersion: 0, actualVersion: 2 });
      expect(b).toMatchObject({ status: "fulfilled", value: { version: 3 } });
      const read = await j.readStream("order/1");
      expect(read.map((e) => (e.data as { tag: string }).tag)).toEqual(["a", "a", "b"]);
    });

    it("appends without an expected version from many writers at once, none lost", async () => {
      const j = ctx.journal();
      const results = await together(Array.from({ length: 20 }, () => ({ stream: "s/1", events: events(1), now: T0 })));
      expect(results.every((r) => r.status === "fulfilled")).toBe(true);
      expect(await j.streamVersion("s/1")).toBe(20);
    });
  });
}
