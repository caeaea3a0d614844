import {
  CheckpointConflictError,
  DuplicateMessageError,
  IdempotencyKeyReusedError,
  InvalidInputError,
  VersionConflictError,
} from "../base/errors.js";
import { type ConformanceContext, outboxRow, T0 } from "./conformance-fixtures.js";
import type { Commit, Journal, NewEvent, NewOutboxRow } from "./types.js";

/** A commit is all or nothing: every refusal writes none of it; what landed survives a reopen. Run by `journalConformance` on every back end. */
export function atomicityConformance(ctx: ConformanceContext): void {
  const { describe, it, expect } = ctx.api;
  const { events, fullCommit, expectNothingOf } = ctx;
  describe("atomicity", () => {
    it("refuses a stale expected version with a typed error and writes nothing of the commit", async () => {
      const j = ctx.journal();
      await j.commit({ stream: "order/1", expectedVersion: 0, events: events(2), now: T0 });
      const error = await j.commit(fullCommit("order/1", 1, "stale")).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(VersionConflictError);
      expect(error).toMatchObject({ stream: "order/1", expectedVersion: 1, actualVersion: 2 });
      await expectNothingOf("order/1", "stale", 2);
    });

    it("refuses a commit expecting a new stream (version 0) on one with events, and writes nothing of it", async () => {
      const j = ctx.journal();
      // What a send with `expectNew` relies on: the runtime decided without reading the stream.
      await j.commit({ stream: "order/1", expectedVersion: 0, events: events(2), now: T0 });
      const error = await j.commit(fullCommit("order/1", 0, "fresh")).catch((e: unknown) => e);
      expect(error).toMatchObject({ name: "VersionConflictError", expectedVersion: 0, actualVersion: 2 });
      await expectNothingOf("order/1", "fresh", 2);
    });

    it("refuses an expected version ahead of the stream (no holes)", async () => {
      const j = ctx.journal();
      await j.commit({ stream: "order/1", expectedVersion: 0, events: events(1), now: T0 });
      const error = await j.commit(fullCommit("order/1", 3, "ahead")).catch((e: unknown) => e);
      expect(error).toMatchObject({ name: "VersionConflictError", expectedVersion: 3, actualVersion: 1 });
      await expectNothingOf("order/1", "ahead", 1);
      expect(await j.commit({ stream: "order/1", expectedVersion: 1, events: events(1), now: T0 })).toMatchObject({
        version: 2,
      });
    });

    it("writes nothing when the inbox already holds the message", async () => {
      const j = ctx.journal();
      await j.commit({ inbox: { consumer: "order/1", messageId: "dup:msg", reply: "first" }, now: T0 });
      const commit = fullCommit("order/1", 0, "dup");
      const error = await j.commit(commit).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(DuplicateMessageError);
      expect(error).toMatchObject({ consumer: "order/1", messageId: "dup:msg" });
      await expectNothingOf("order/1", "dup", 0, true);
      expect((await j.getInbox("order/1", "dup:msg"))?.reply).toBe("first");
    });

    it("refuses an event id already in the journal (another stream too) and writes nothing", async () => {
      const j = ctx.journal();
      await j.commit({
        stream: "order/9",
        expectedVersion: 0,
        events: [{ eventId: "same-id", type: "Placed", data: null }],
        now: T0,
      });
      const commit = fullCommit("order/1", 0, "reused");
      commit.events = [{ eventId: "same-id", type: "Placed", data: null }];
      const error = await j.commit(commit).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(InvalidInputError);
      await expectNothingOf("order/1", "reused", 0);
    });

    it("refuses an effect key held by another stream or with another input, and writes nothing", async () => {
      const j = ctx.journal();
      await j.commit({ outbox: [outboxRow("key:effect", { payload: { input: { a: 1, b: [2] } } })], now: T0 });
      const other = fullCommit("order/2", 0, "other");
      other.outbox = [outboxRow("key:effect", { stream: "order/2", payload: { input: { a: 1, b: [2] } } })];
      const byStream = await j.commit(other).catch((e: unknown) => e);
      expect(byStream).toBeInstanceOf(IdempotencyKeyReusedError);
      expect(byStream).toMatchObject({ key: "key:effect" });
      expect(String((byStream as Error).message).includes("order/2")).toBe(true);
      await expectNothingOf("order/2", "other", 0);
      const changed = fullCommit("order/1", 0, "changed");
      changed.outbox = [outboxRow("key:effect", { payload: { input: { a: 2, b: [2] } } })];
      expect(await j.commit(changed).catch((e: unknown) => e)).toBeInstanceOf(IdempotencyKeyReusedError);
      await expectNothingOf("order/1", "changed", 0);
      expect((await j.getOutbox("key:effect"))?.payload).toEqual({ input: { a: 1, b: [2] } });
      // The same request again (keys in another order: compared canonically) is a no-op.
      const same = await j.commit({
        stream: "order/1",
        events: events(1, "same"),
        outbox: [outboxRow("key:effect", { payload: { input: { b: [2], a: 1 } } })],
        now: T0,
      });
      expect(same.inserted).toEqual([]);
      expect(await j.streamVersion("order/1")).toBe(1);
    });

    it("takes an effect requested again under another trace context (payload.trace) as the same request", async () => {
      const j = ctx.journal();
      const traced = (traceparent: string) =>
        outboxRow("key:traced", { payload: { input: { a: 1 }, trace: { traceparent } } });
      await j.commit({ outbox: [traced("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")], now: T0 });
      const again = await j.commit({
        stream: "order/1",
        events: events(1, "again"),
        outbox: [traced("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")],
        now: T0 + 1,
      });
      expect(again.inserted).toEqual([]);
      expect(await j.streamVersion("order/1")).toBe(1);
      const changed = outboxRow("key:traced", { payload: { input: { a: 2 }, trace: { traceparent: "x" } } });
      expect(await j.commit({ outbox: [changed], now: T0 + 2 }).catch((e: unknown) => e)).toBeInstanceOf(
        IdempotencyKeyReusedError,
      );
    });

    it("writes nothing when the checkpoint moved", async () => {
      const j = ctx.journal();
      await j.commit({ checkpoint: { consumer: "seq", source: "moved:src", version: 4 }, now: T0 });
      const commit = {
        ...fullCommit("order/1", 0, "moved"),
        checkpoint: { consumer: "seq", source: "moved:src", version: 6, expected: 5 },
      };
      const error = await j.commit(commit).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(CheckpointConflictError);
      expect(error).toMatchObject({ expected: 5, actual: 4 });
      expect(await j.getCheckpoint("seq", "moved:src")).toBe(4);
      expect(await j.streamVersion("order/1")).toBe(0);
      expect(await j.getOutbox("moved:effect")).toBeUndefined();
      expect(await j.getInbox("order/1", "moved:msg")).toBeUndefined();
      expect(await j.getDocument("orders", "moved:doc")).toBeUndefined();
    });

    const poison = { amount: 10n };
    const placements: [string, (c: Commit) => void][] = [
      ["event data", (c) => (((c.events as NewEvent[])[1] as NewEvent).data = poison)],
      ["snapshot state", (c) => (c.snapshot = { version: 2, schemaVersion: 1, state: poison })],
      ["outbox payload", (c) => (((c.outbox as NewOutboxRow[])[0] as NewOutboxRow).payload = poison)],
      ["outbox done result", (c) => (c.outboxDone = [{ id: "anything", outcome: "completed", result: poison }])],
      ["inbox reply", (c) => (c.inbox = { consumer: "order/1", messageId: "poison:msg", reply: poison })],
      ["parked message", (c) => (c.park = [{ consumer: "seq", source: "poison:src", version: 7, message: poison }])],
      ["dead letter payload", (c) => (((c.deadLetters ?? [])[0] as { payload: unknown }).payload = poison)],
      ["document", (c) => (c.documents = [...(c.documents ?? []), { collection: "orders", id: "other", doc: poison }])],
    ];
    for (const [where, place] of placements) {
      it(`writes nothing when the ${where} cannot be stored as JSON (BigInt)`, async () => {
        const j = ctx.journal();
        const commit = fullCommit("order/1", 0, "poison");
        place(commit);
        await expect(j.commit(commit)).rejects.toThrow();
        await expectNothingOf("order/1", "poison", 0);
        expect(await j.getDocument("orders", "other")).toBeUndefined();
        // The store is still usable afterwards.
        expect((await j.commit({ stream: "order/1", expectedVersion: 0, events: events(1), now: T0 })).version).toBe(1);
      });
    }

    it("lets exactly one of two writers racing at the same expected version win, every round", async () => {
      const subject = ctx.subject();
      const j = ctx.journal();
      const other = subject.secondWriter ? await subject.secondWriter() : j;
      let version = 0;
      for (let round = 0; round < 25; round++) {
        const attempt = (w: Journal, who: string) =>
          w.commit({
            stream: "race/1",
            expectedVersion: version,
            events: events(1 + (round % 3), who),
            outbox: [outboxRow(`race:${round}:${who}`, { stream: "race/1" })],
            inbox: { consumer: "race/1", messageId: `race:${round}:${who}`, reply: who },
            now: T0 + round,
          });
        const settled = await Promise.allSettled([attempt(j, "a"), attempt(other, "b")]);
        const won = settled.filter((s) => s.status === "fulfilled");
        const lost = settled.filter((s) => s.status === "rejected");
        expect(won).toHaveLength(1);
        expect(lost).toHaveLength(1);
        expect((lost[0] as PromiseRejectedResult).reason).toBeInstanceOf(VersionConflictError);
        const loser = settled[0]?.status === "rejected" ? "a" : "b";
        expect(await j.getOutbox(`race:${round}:${loser}`)).toBeUndefined();
        expect(await j.getInbox("race/1", `race:${round}:${loser}`)).toBeUndefined();
        version += 1 + (round % 3);
        expect(await j.streamVersion("race/1")).toBe(version);
      }
      const all = await j.readStream("race/1");
      expect(all.map((e) => e.version)).toEqual(Array.from({ length: version }, (_, i) => i + 1));
    });
  });

  describe("durability", () => {
    it("keeps everything across close and reopen", async () => {
      const subject = ctx.subject();
      const j = ctx.journal();
      await j.commit(fullCommit("order/9", 0, "keep"));
      await j.commit({ stream: "order/9", expectedVersion: 2, events: events(1), now: T0 + 6 });
      const before = {
        events: await j.readStream("order/9"),
        snapshot: await j.latestSnapshot("order/9"),
        outbox: await j.listOutbox(),
        inbox: await j.getInbox("order/9", "keep:msg"),
        parked: await j.listParked("seq"),
        dead: await j.listDeadLetters(),
        docs: await j.listDocuments("orders"),
      };
      await j.close();
      const reopened = await subject.reopen();
      await reopened.migrate();
      expect(await reopened.readStream("order/9")).toEqual(before.events);
      expect(await reopened.latestSnapshot("order/9")).toEqual(before.snapshot);
      expect(await reopened.listOutbox()).toEqual(before.outbox);
      expect(await reopened.getInbox("order/9", "keep:msg")).toEqual(before.inbox);
      expect(await reopened.getCheckpoint("seq", "keep:src")).toBe(3);
      expect(await reopened.listParked("seq")).toEqual(before.parked);
      expect(await reopened.listDeadLetters()).toEqual(before.dead);
      expect(await reopened.listDocuments("orders")).toEqual(before.docs);
      expect(before.events).toHaveLength(3);
      expect(
        (await reopened.commit({ stream: "order/9", expectedVersion: 3, events: events(1), now: T0 })).version,
      ).toBe(4);
    });

    it("runs migrate() again harmlessly", async () => {
      const j = ctx.journal();
      await j.commit({ stream: "m/1", events: events(2), now: T0 });
      await j.migrate();
      await j.migrate();
      expect(await j.streamVersion("m/1")).toBe(2);
    });
  });
}
