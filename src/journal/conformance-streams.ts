import { InvalidInputError } from "../base/errors.js";
import { type ConformanceContext, outboxRow, T0, U_ID, UNICODE } from "./conformance-fixtures.js";

/** Streams and snapshots: appends, reads, versions, listing by prefix, exact round trips. Run by `journalConformance` on every back end. */
export function streamConformance(ctx: ConformanceContext): void {
  const { describe, it, expect } = ctx.api;
  const { events } = ctx;
  describe("streams", () => {
    it("appends, reads and reports the stream version", async () => {
      const j = ctx.journal();
      expect(await j.streamVersion("order/1")).toBe(0);
      expect(await j.readStream("order/1")).toEqual([]);
      const first = await j.commit({
        stream: "order/1",
        expectedVersion: 0,
        events: [
          { eventId: "a1", type: "Placed", data: { total: 12.5 }, causationId: "cmd-1", correlationId: "corr-1" },
          { eventId: "a2", type: "Paid", data: { nested: { list: [1, "two", null, true] } }, schemaVersion: 3 },
        ],
        now: T0,
      });
      expect(first.version).toBe(2);
      expect(first.events).toEqual([
        {
          eventId: "a1",
          stream: "order/1",
          version: 1,
          type: "Placed",
          data: { total: 12.5 },
          causationId: "cmd-1",
          correlationId: "corr-1",
          recordedAt: T0,
          schemaVersion: 1,
        },
        {
          eventId: "a2",
          stream: "order/1",
          version: 2,
          type: "Paid",
          data: { nested: { list: [1, "two", null, true] } },
          causationId: null,
          correlationId: null,
          recordedAt: T0,
          schemaVersion: 3,
        },
      ]);
      expect(await j.readStream("order/1")).toEqual(first.events);
      const second = await j.commit({ stream: "order/1", expectedVersion: 2, events: events(3, "x"), now: T0 + 1 });
      expect(second.version).toBe(5);
      expect(second.events.map((e) => e.version)).toEqual([3, 4, 5]);
      expect(await j.streamVersion("order/1")).toBe(5);
      expect((await j.readStream("order/1", 4)).map((e) => e.version)).toEqual([4, 5]);
      expect((await j.readStream("order/1", 2, 2)).map((e) => e.version)).toEqual([2, 3]);
      expect(await j.readStream("order/1", 6)).toEqual([]);
      expect(await j.readStream("order/1", 1, 0)).toEqual([]);
    });

    it("answers reads made at the same time, of many streams and pages, each as if it were alone", async () => {
      const j = ctx.journal();
      // Back ends may send reads that arrive together as one statement (PostgreSQL does): each
      // read must still get exactly its own stream's page.
      for (const [stream, n] of [
        ["r/a", 5],
        ["r/b", 1],
        ["r/c", 3],
      ] as const) {
        await j.commit({ stream, expectedVersion: 0, events: events(n, stream), now: T0 });
      }
      const asked = [
        ["r/a", 1, Number.POSITIVE_INFINITY],
        ["r/b", 1, Number.POSITIVE_INFINITY],
        ["r/a", 2, 2],
        ["r/none", 1, Number.POSITIVE_INFINITY],
        ["r/c", 3, 10],
        ["r/a", 6, 5],
        ["r/c", 1, 0],
        ["r/a", 4, Number.POSITIVE_INFINITY],
      ] as const;
      const pages = await Promise.all(asked.map(([stream, from, limit]) => j.readStream(stream, from, limit)));
      expect(pages.map((page) => page.map((e) => `${e.stream}@${e.version}`))).toEqual([
        ["r/a@1", "r/a@2", "r/a@3", "r/a@4", "r/a@5"],
        ["r/b@1"],
        ["r/a@2", "r/a@3"],
        [],
        ["r/c@3"],
        [],
        [],
        ["r/a@4", "r/a@5"],
      ]);
    });

    it("appends without an expected version at the end of the stream", async () => {
      const j = ctx.journal();
      await j.commit({ stream: "s/1", events: events(2), now: T0 });
      const result = await j.commit({ stream: "s/1", events: events(1), now: T0 });
      expect(result.version).toBe(3);
      expect(result.events[0]?.version).toBe(3);
    });

    it("returns the current version for a commit without events, and refuses events without a stream", async () => {
      const j = ctx.journal();
      await j.commit({ stream: "s/1", expectedVersion: 0, events: events(2), now: T0 });
      expect((await j.commit({ stream: "s/1", expectedVersion: 2, now: T0 })).version).toBe(2);
      await expect(j.commit({ events: events(1), now: T0 })).rejects.toBeInstanceOf(InvalidInputError);
    });

    it("keeps each stream's events apart and in version order", async () => {
      const j = ctx.journal();
      for (let i = 0; i < 10; i++) {
        await j.commit({ stream: i % 2 ? "b/1" : "a/1", events: events(2, i % 2 ? "b" : "a", i), now: T0 + i });
      }
      const a = await j.readStream("a/1");
      expect(a.map((e) => e.version)).toEqual(Array.from({ length: 10 }, (_, i) => i + 1));
      expect(a.every((e) => e.stream === "a/1" && (e.data as { tag: string }).tag === "a")).toBe(true);
      expect(a.map((e) => e.recordedAt)).toEqual([
        T0,
        T0,
        T0 + 2,
        T0 + 2,
        T0 + 4,
        T0 + 4,
        T0 + 6,
        T0 + 6,
        T0 + 8,
        T0 + 8,
      ]);
    });

    it("lists streams by prefix, sorted, literally (no wildcards, case-sensitive)", async () => {
      const j = ctx.journal();
      for (const s of ["order/2", "order/10", "order/1", "Order/3", "orders/1", "ord%r/1", "ord_r/2", "pay/1"]) {
        await j.commit({ stream: s, events: events(1), now: T0 });
      }
      await j.commit({ stream: "order/1", events: events(1), now: T0 });
      expect(await j.listStreams("order/")).toEqual(["order/1", "order/10", "order/2"]);
      expect(await j.listStreams("order/", 2)).toEqual(["order/1", "order/10"]);
      expect(await j.listStreams("ord%")).toEqual(["ord%r/1"]);
      expect(await j.listStreams("ord_")).toEqual(["ord_r/2"]);
      expect(await j.listStreams("nothing/")).toEqual([]);
    });

    it("lists streams by prefix with their versions, as listStreams orders and limits them", async () => {
      const j = ctx.journal();
      await j.commit({ stream: "order/2", events: events(3), now: T0 });
      await j.commit({ stream: "order/10", events: events(1), now: T0 });
      await j.commit({ stream: "ord_r/1", events: events(2), now: T0 });
      await j.commit({ stream: "order/2", expectedVersion: 3, events: events(2), now: T0 });
      expect(await j.listStreamVersions("order/")).toEqual([
        { stream: "order/10", version: 1 },
        { stream: "order/2", version: 5 },
      ]);
      expect(await j.listStreamVersions("order/", 1)).toEqual([{ stream: "order/10", version: 1 }]);
      expect(await j.listStreamVersions("ord_")).toEqual([{ stream: "ord_r/1", version: 2 }]);
      expect(await j.listStreamVersions("nothing/")).toEqual([]);
      // A version moves with each commit, whoever made it: a reader keyed on it reads again.
      await j.commit({ stream: "order/10", expectedVersion: 1, events: events(1), now: T0 });
      expect((await j.listStreamVersions("order/1")).map((s) => s.version)).toEqual([2]);
    });

    it("reads a large stream (20,000 events) in pages", async () => {
      const j = ctx.journal();
      const total = 20_000;
      const batch = 2_500;
      for (let from = 0; from < total; from += batch) {
        await j.commit({ stream: "big/1", expectedVersion: from, events: events(batch, "big", from), now: T0 });
      }
      expect(await j.streamVersion("big/1")).toBe(total);
      let next = 1;
      for (;;) {
        const page = await j.readStream("big/1", next, 3_000);
        for (const e of page) {
          expect(e.version).toBe(next);
          expect((e.data as { n: number }).n).toBe(next);
          next++;
        }
        if (page.length < 3_000) break;
      }
      expect(next).toBe(total + 1);
    });

    it("round-trips unicode, null and a ~1 MB payload exactly", async () => {
      const j = ctx.journal();
      const big = {
        text: UNICODE.repeat(4),
        blob: "x".repeat(1_000_000),
        nested: { deep: [[[{ a: [UNICODE, -0.5, 1e21, 2 ** 53 - 1] }]]] },
      };
      const stream = `order/${U_ID}`;
      await j.commit({
        stream,
        expectedVersion: 0,
        events: [
          { eventId: `u-${U_ID}`, type: "Ünïcødé 注文", data: big },
          { eventId: "n-1", type: "Nothing", data: null },
        ],
        snapshot: { version: 2, schemaVersion: 1, state: null },
        outbox: [
          outboxRow(`k-${U_ID}`, { stream, payload: big, kind: "mail 📧" }),
          outboxRow("k-null", { stream, payload: null }),
        ],
        inbox: { consumer: stream, messageId: `m-${U_ID}`, reply: big },
        documents: [{ collection: "docs", id: U_ID, doc: big }],
        deadLetters: [
          {
            id: "dl-u",
            consumer: "c",
            messageId: null,
            payload: null,
            error: UNICODE,
            stack: null,
            attempts: 1,
            firstFailedAt: T0,
            lastFailedAt: T0,
          },
        ],
        park: [{ consumer: "c", source: UNICODE, version: 2, message: null }],
        now: T0,
      });
      const read = await j.readStream(stream);
      expect(read[0]?.data).toEqual(big);
      expect(read[0]?.type).toBe("Ünïcødé 注文");
      expect(read[0]?.eventId).toBe(`u-${U_ID}`);
      expect(read[1]?.data).toBeNull();
      expect((await j.latestSnapshot(stream))?.state).toBeNull();
      const row = await j.getOutbox(`k-${U_ID}`);
      expect(row?.payload).toEqual(big);
      expect(row?.kind).toBe("mail 📧");
      expect((await j.getOutbox("k-null"))?.payload).toBeNull();
      expect((await j.getInbox(stream, `m-${U_ID}`))?.reply).toEqual(big);
      expect((await j.getDocument("docs", U_ID))?.doc).toEqual(big);
      const dl = await j.getDeadLetter("dl-u");
      expect(dl?.error).toBe(UNICODE);
      expect(dl?.payload).toBeNull();
      expect((await j.listParked("c", UNICODE))[0]?.message).toBeNull();
      expect(await j.listStreams("order/")).toEqual([stream]);
    });
  });

  describe("snapshots", () => {
    it("returns the latest snapshot of a stream only", async () => {
      const j = ctx.journal();
      expect(await j.latestSnapshot("order/1")).toBeUndefined();
      await j.commit({
        stream: "order/1",
        events: events(2),
        snapshot: { version: 2, schemaVersion: 1, state: { n: 2 } },
        now: T0,
      });
      await j.commit({
        stream: "order/1",
        events: events(2),
        snapshot: { version: 4, schemaVersion: 2, state: { n: 4 } },
        now: T0 + 1,
      });
      expect(await j.latestSnapshot("order/1")).toEqual({
        stream: "order/1",
        version: 4,
        schemaVersion: 2,
        state: { n: 4 },
        takenAt: T0 + 1,
      });
      expect(await j.latestSnapshot("order/2")).toBeUndefined();
    });

    it("reads the latest snapshot and the events after it in one call, several streams at once", async () => {
      const j = ctx.journal();
      await j.commit({ stream: "order/1", events: events(3), now: T0 });
      await j.commit({
        stream: "order/1",
        events: events(1),
        snapshot: { version: 4, schemaVersion: 3, state: { n: 4 } },
        now: T0 + 1,
      });
      await j.commit({ stream: "order/1", events: events(2), now: T0 + 2 });
      await j.commit({ stream: "order/2", events: events(2), now: T0 });
      await j.commit({
        stream: "order/3",
        events: events(2),
        snapshot: { version: 2, schemaVersion: 1, state: null },
        now: T0,
      });
      // Asked together, as actors waking in one turn ask: each answer is its own stream's.
      const [one, two, three, none, limited] = await Promise.all([
        j.readFromSnapshot("order/1"),
        j.readFromSnapshot("order/2"),
        j.readFromSnapshot("order/3"),
        j.readFromSnapshot("order/404"),
        j.readFromSnapshot("order/1", 1),
      ]);
      expect(one.snapshot).toEqual({
        stream: "order/1",
        version: 4,
        schemaVersion: 3,
        state: { n: 4 },
        takenAt: T0 + 1,
      });
      expect(one.events).toEqual(await j.readStream("order/1", 5));
      expect(one.events.map((e) => e.version)).toEqual([5, 6]);
      // No snapshot: every event, as readStream from 1 answers.
      expect(two).toEqual({ snapshot: undefined, events: await j.readStream("order/2") });
      // A snapshot at the stream's head (a null state kept as null): no events after it.
      expect(three).toEqual({
        snapshot: { stream: "order/3", version: 2, schemaVersion: 1, state: null, takenAt: T0 },
        events: [],
      });
      expect(none).toEqual({ snapshot: undefined, events: [] });
      expect(limited.events.map((e) => e.version)).toEqual([5]);
    });
  });
}
