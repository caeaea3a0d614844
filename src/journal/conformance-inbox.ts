import { DuplicateMessageError, InvalidInputError } from "../base/errors.js";
import { type ConformanceContext, outboxRow, T0 } from "./conformance-fixtures.js";
import type { Commit } from "./types.js";

/** The inbox, and final outcomes recorded by their outbox row (`inbox.outcomeOf`). Run by `journalConformance` on every back end. */
export function inboxConformance(ctx: ConformanceContext): void {
  const { describe, it, expect } = ctx.api;
  const { events, fullCommit } = ctx;
  describe("final outcomes recorded by their row (inbox.outcomeOf)", () => {
    /** The owner's commit of row `id`'s final outcome, as the runtime builds it. */
    const outcome = (id: string, tag: string, over: Partial<Commit> = {}): Commit => ({
      stream: "order/1",
      events: events(1, tag),
      outboxDone: [{ id, outcome: "completed", result: { tag } }],
      inbox: { consumer: "order/1", messageId: `${id}#outcome`, reply: null, outcomeOf: id },
      now: T0 + 5,
      ...over,
    });
    const tags = async (stream = "order/1") =>
      (await ctx.journal().readStream(stream)).map((e) => (e.data as { tag: string }).tag);

    it("marks a held row done and writes no inbox row; the same outcome again is a duplicate", async () => {
      const j = ctx.journal();
      await j.commit({ outbox: [outboxRow("k1")], now: T0 });
      expect(await j.commit(outcome("k1", "first"))).toMatchObject({ version: 1 });
      expect(await j.getOutbox("k1")).toMatchObject({
        status: "done",
        outcome: "completed",
        result: { tag: "first" },
      });
      expect(await j.getInbox("order/1", "k1#outcome")).toBeUndefined();
      const again = await j.commit(outcome("k1", "again", { expectedVersion: 1 })).catch((e: unknown) => e);
      expect(again).toBeInstanceOf(DuplicateMessageError);
      expect(again).toMatchObject({ consumer: "order/1", messageId: "k1#outcome" });
      expect(await tags()).toEqual(["first"]);
      expect(await j.getOutbox("k1")).toMatchObject({ result: { tag: "first" } });
    });

    it("falls back to the inbox row when the consumer does not hold the row", async () => {
      const j = ctx.journal();
      await j.commit({
        outbox: [
          outboxRow("other"),
          outboxRow("event", { category: "event" }),
          outboxRow("mine", { stream: "order/9" }),
        ],
        now: T0,
      });
      // Absent (pruned, or never there), held by another stream, or an event row: an inbox row each.
      for (const id of ["gone", "event", "mine"]) {
        await j.commit(outcome(id, id));
        expect(await j.getInbox("order/1", `${id}#outcome`)).toMatchObject({ reply: null, recordedAt: T0 + 5 });
        await expect(j.commit(outcome(id, `${id}-again`))).rejects.toBeInstanceOf(DuplicateMessageError);
      }
      expect(await tags()).toEqual(["gone", "event", "mine"]);
      expect((await j.getOutbox("other"))?.status).toBe("pending");
    });

    it("gives each outcome of a batch its own fate", async () => {
      const j = ctx.journal();
      await j.commit({
        outbox: [
          ...["a", "b", "c"].map((id) => outboxRow(id, { stream: `order/${id}` })),
          outboxRow("d", { stream: "order/other" }),
          outboxRow("e", { stream: "order/e", category: "event" }),
        ],
        now: T0,
      });
      const of = (id: string, tag: string) =>
        outcome(id, tag, {
          stream: `order/${id}`,
          inbox: { consumer: `order/${id}`, messageId: `${id}#outcome`, reply: null, outcomeOf: id },
        });
      await j.commit(of("a", "a1"));
      const settled = await Promise.allSettled([
        j.commit(of("a", "a2")),
        j.commit(of("b", "b1")),
        j.commit(fullCommit("order/x", 0, "x")),
        j.commit(of("c", "c1")),
        j.commit(of("c", "c2")),
      ]);
      expect(settled.map((s) => s.status)).toEqual(["rejected", "fulfilled", "fulfilled", "fulfilled", "rejected"]);
      expect(await j.getInbox("order/b", "b#outcome")).toBeUndefined();
      for (const i of [0, 4]) {
        expect((settled[i] as PromiseRejectedResult).reason).toBeInstanceOf(DuplicateMessageError);
      }
      expect([await tags("order/a"), await tags("order/b"), await tags("order/c")]).toEqual([["a1"], ["b1"], ["c1"]]);
      expect((await j.getOutbox("c"))?.result).toEqual({ tag: "c1" });
      expect(await j.getInbox("order/x", "x:msg")).toMatchObject({ reply: { ok: "x" } });
      // Rows their consumer does not hold (another stream's, an event's), beside one it holds and
      // no duplicate: the first two are recorded in the inbox, the third by its row.
      await j.commit({ outbox: [outboxRow("f", { stream: "order/f" })], now: T0 });
      const mixed = await Promise.allSettled([of("d", "d1"), of("e", "e1"), of("f", "f1")].map((c) => j.commit(c)));
      expect(mixed.map((s) => s.status)).toEqual(["fulfilled", "fulfilled", "fulfilled"]);
      for (const id of ["d", "e"]) {
        expect(await j.getInbox(`order/${id}`, `${id}#outcome`)).toMatchObject({ reply: null });
      }
      expect(await j.getInbox("order/f", "f#outcome")).toBeUndefined();
      expect((await j.getOutbox("f"))?.status).toBe("done");
    });

    it("lets exactly one of two writers racing with the same outcome record it, every round", async () => {
      const subject = ctx.subject();
      const j = ctx.journal();
      const other = subject.secondWriter ? await subject.secondWriter() : j;
      await j.commit({ outbox: Array.from({ length: 25 }, (_, round) => outboxRow(`race:${round}`)), now: T0 });
      for (let round = 0; round < 25; round++) {
        // No expected version: only the row's done transition can tell the two apart.
        const settled = await Promise.allSettled([
          j.commit(outcome(`race:${round}`, `a${round}`)),
          other.commit(outcome(`race:${round}`, `b${round}`)),
        ]);
        expect(settled.filter((s) => s.status === "fulfilled")).toHaveLength(1);
        const lost = settled.find((s) => s.status === "rejected") as PromiseRejectedResult;
        expect(lost.reason).toBeInstanceOf(DuplicateMessageError);
        expect(await j.streamVersion("order/1")).toBe(round + 1);
      }
    });

    it("refuses an outcomeOf the commit does not finish, or with a reply, writing nothing", async () => {
      const j = ctx.journal();
      await j.commit({ outbox: [outboxRow("k1")], now: T0 });
      const unlisted = outcome("k1", "unlisted", { outboxDone: [] });
      await expect(j.commit(unlisted)).rejects.toThrow(/outcomeOf "k1" names an outbox row this commit does not/);
      const replied = outcome("k1", "replied");
      replied.inbox = { ...(replied.inbox as NonNullable<Commit["inbox"]>), reply: { ok: true } };
      await expect(j.commit(replied)).rejects.toBeInstanceOf(InvalidInputError);
      expect(await j.streamVersion("order/1")).toBe(0);
      expect((await j.getOutbox("k1"))?.status).toBe("pending");
    });
  });

  describe("inbox", () => {
    it("returns a recorded message with its reply and prunes strictly before a time", async () => {
      const j = ctx.journal();
      await j.commit({ inbox: { consumer: "order/1", messageId: "m1", reply: { ok: 1 } }, now: T0 });
      await j.commit({ inbox: { consumer: "order/1", messageId: "m2", reply: null }, now: T0 + 10 });
      await j.commit({ inbox: { consumer: "order/2", messageId: "m1", reply: "other" }, now: T0 + 20 });
      expect(await j.getInbox("order/1", "m1")).toEqual({
        consumer: "order/1",
        messageId: "m1",
        reply: { ok: 1 },
        recordedAt: T0,
      });
      expect((await j.getInbox("order/2", "m1"))?.reply).toBe("other");
      expect(await j.getInbox("order/3", "m1")).toBeUndefined();
      expect(await j.pruneInbox(T0 + 10)).toBe(1);
      expect(await j.getInbox("order/1", "m1")).toBeUndefined();
      expect(await j.getInbox("order/1", "m2")).toMatchObject({ reply: null, recordedAt: T0 + 10 });
      expect(await j.pruneInbox(T0 + 10)).toBe(0);
      expect(await j.pruneInbox(T0 + 21)).toBe(2);
      await j.commit({ inbox: { consumer: "order/1", messageId: "m1", reply: "again" }, now: T0 + 30 });
      expect((await j.getInbox("order/1", "m1"))?.reply).toBe("again");
    });
  });
}
