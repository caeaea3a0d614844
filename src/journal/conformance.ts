import {
  CheckpointConflictError,
  DuplicateMessageError,
  IdempotencyKeyReusedError,
  InvalidInputError,
  VersionConflictError,
} from "../base/errors.js";
import type { ConformanceTestApi } from "./conformance-api.js";
import { consoleQueriesConformance } from "./conformance-console.js";
import { consumerStateConformance } from "./conformance-consumer-state.js";
import { publishedLogConformance } from "./conformance-published.js";
import { storableTextConformance } from "./conformance-storable.js";
import type { Commit, Journal, NewEvent, NewOutboxRow } from "./types.js";

export type { ConformanceAssertion, ConformanceTestApi } from "./conformance-api.js";

/**
 * One journal to test. The factory is called before every test and `cleanup` after it; it may
 * hand out a fresh store each time, or the same store emptied (e.g. one PostgreSQL schema per
 * test file, truncated between tests).
 */
export interface ConformanceSubject {
  journal: Journal;
  /** Open the same store again (after `journal.close()`), as a restarted process would. */
  reopen: () => Promise<Journal>;
  /** A second journal instance on the same store (another connection, pool or process). */
  secondWriter?: () => Promise<Journal>;
  /** Close everything the subject opened and release or empty the store. */
  cleanup: () => Promise<void>;
}

const T0 = 1_700_000_000_000;

const events = (n: number, tag = "e", from = 0): NewEvent[] =>
  Array.from({ length: n }, (_, i) => ({
    eventId: `${tag}-${from + i + 1}-${Math.random().toString(36).slice(2)}`,
    type: "Happened",
    data: { tag, n: from + i + 1 },
  }));

const outboxRow = (id: string, over: Partial<NewOutboxRow> = {}): NewOutboxRow => ({
  id,
  category: "effect",
  kind: "payment",
  stream: "order/1",
  payload: { id },
  notBefore: T0,
  ...over,
});

/** Strings a store must keep exactly: emoji, CJK, right-to-left, combining marks, control chars (no NUL). */
const U_ID = "注文-🧾-שלום-\u0001";
const UNICODE =
  "emoji 🧾💳🚚 👩🏽‍💻 cjk 注文処理 中文 한국어 rtl שלום مرحبا combining e\u0301 ctl \u0001\u0007\t\n\r\u001f quotes \"'\\ end";

/**
 * The journal contract, as tests. Run it on every back end, with your test runner's functions:
 *
 * @example
 * import { afterEach, beforeEach, describe, expect, it } from "vitest";
 * journalConformance({ describe, it, expect, beforeEach, afterEach }, "memory", async () => {
 *   const journal = new MemoryJournal();
 *   return { journal, reopen: async () => journal, cleanup: async () => {} };
 * });
 */
export function journalConformance(
  api: ConformanceTestApi,
  label: string,
  factory: () => Promise<ConformanceSubject>,
): void {
  const { describe, it, expect, beforeEach, afterEach } = api;
  describe(`journal conformance: ${label}`, () => {
    let subject: ConformanceSubject;
    let j: Journal;
    beforeEach(async () => {
      subject = await factory();
      j = subject.journal;
      await j.migrate();
    });
    afterEach(async () => {
      await subject.cleanup();
    });

    storableTextConformance(api, () => j);
    publishedLogConformance(api, () => j);
    consumerStateConformance(api, () => j);
    consoleQueriesConformance(api, () => j);

    /** Everything a commit can write, so atomicity tests can check that none of it landed. */
    const fullCommit = (stream: string, expectedVersion: number, tag: string): Commit => ({
      stream,
      expectedVersion,
      events: events(2, tag),
      snapshot: { version: expectedVersion + 2, schemaVersion: 1, state: { tag } },
      outbox: [outboxRow(`${tag}:effect`, { stream })],
      inbox: { consumer: stream, messageId: `${tag}:msg`, reply: { ok: tag } },
      checkpoint: { consumer: "seq", source: `${tag}:src`, version: 3 },
      park: [{ consumer: "seq", source: `${tag}:src`, version: 7, message: { tag } }],
      deadLetters: [
        {
          id: `${tag}:dl`,
          consumer: "seq",
          messageId: null,
          payload: { tag },
          error: "boom",
          stack: null,
          attempts: 1,
          firstFailedAt: T0,
          lastFailedAt: T0,
        },
      ],
      documents: [{ collection: "orders", id: `${tag}:doc`, doc: { tag } }],
      now: T0 + 5,
    });

    const expectNothingOf = async (stream: string, tag: string, versionBefore: number, inboxHeld = false) => {
      expect(await j.streamVersion(stream)).toBe(versionBefore);
      const read = await j.readStream(stream);
      expect(read.filter((e) => (e.data as { tag?: string }).tag === tag)).toEqual([]);
      expect(await j.getOutbox(`${tag}:effect`)).toBeUndefined();
      if (!inboxHeld) expect(await j.getInbox(stream, `${tag}:msg`)).toBeUndefined();
      expect(await j.getCheckpoint("seq", `${tag}:src`)).toBe(0);
      expect(await j.listParked("seq", `${tag}:src`)).toEqual([]);
      expect(await j.getDeadLetter(`${tag}:dl`)).toBeUndefined();
      expect(await j.getDocument("orders", `${tag}:doc`)).toBeUndefined();
      const snapshot = await j.latestSnapshot(stream);
      expect((snapshot?.state as { tag?: string } | undefined)?.tag).not.toBe(tag);
    };

    describe("streams", () => {
      it("appends, reads and reports the stream version", async () => {
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
        await j.commit({ stream: "s/1", events: events(2), now: T0 });
        const result = await j.commit({ stream: "s/1", events: events(1), now: T0 });
        expect(result.version).toBe(3);
        expect(result.events[0]?.version).toBe(3);
      });

      it("returns the current version for a commit without events, and refuses events without a stream", async () => {
        await j.commit({ stream: "s/1", expectedVersion: 0, events: events(2), now: T0 });
        expect((await j.commit({ stream: "s/1", expectedVersion: 2, now: T0 })).version).toBe(2);
        await expect(j.commit({ events: events(1), now: T0 })).rejects.toBeInstanceOf(InvalidInputError);
      });

      it("keeps each stream's events apart and in version order", async () => {
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

    describe("atomicity", () => {
      it("refuses a stale expected version with a typed error and writes nothing of the commit", async () => {
        await j.commit({ stream: "order/1", expectedVersion: 0, events: events(2), now: T0 });
        const error = await j.commit(fullCommit("order/1", 1, "stale")).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(VersionConflictError);
        expect(error).toMatchObject({ stream: "order/1", expectedVersion: 1, actualVersion: 2 });
        await expectNothingOf("order/1", "stale", 2);
      });

      it("refuses a commit expecting a new stream (version 0) on one with events, and writes nothing of it", async () => {
        // What a send with `expectNew` relies on: the runtime decided without reading the stream.
        await j.commit({ stream: "order/1", expectedVersion: 0, events: events(2), now: T0 });
        const error = await j.commit(fullCommit("order/1", 0, "fresh")).catch((e: unknown) => e);
        expect(error).toMatchObject({ name: "VersionConflictError", expectedVersion: 0, actualVersion: 2 });
        await expectNothingOf("order/1", "fresh", 2);
      });

      it("refuses an expected version ahead of the stream (no holes)", async () => {
        await j.commit({ stream: "order/1", expectedVersion: 0, events: events(1), now: T0 });
        const error = await j.commit(fullCommit("order/1", 3, "ahead")).catch((e: unknown) => e);
        expect(error).toMatchObject({ name: "VersionConflictError", expectedVersion: 3, actualVersion: 1 });
        await expectNothingOf("order/1", "ahead", 1);
        expect(await j.commit({ stream: "order/1", expectedVersion: 1, events: events(1), now: T0 })).toMatchObject({
          version: 2,
        });
      });

      it("writes nothing when the inbox already holds the message", async () => {
        await j.commit({ inbox: { consumer: "order/1", messageId: "dup:msg", reply: "first" }, now: T0 });
        const commit = fullCommit("order/1", 0, "dup");
        const error = await j.commit(commit).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(DuplicateMessageError);
        expect(error).toMatchObject({ consumer: "order/1", messageId: "dup:msg" });
        await expectNothingOf("order/1", "dup", 0, true);
        expect((await j.getInbox("order/1", "dup:msg"))?.reply).toBe("first");
      });

      it("refuses an event id already in the journal (another stream too) and writes nothing", async () => {
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
        [
          "document",
          (c) => (c.documents = [...(c.documents ?? []), { collection: "orders", id: "other", doc: poison }]),
        ],
      ];
      for (const [where, place] of placements) {
        it(`writes nothing when the ${where} cannot be stored as JSON (BigInt)`, async () => {
          const commit = fullCommit("order/1", 0, "poison");
          place(commit);
          await expect(j.commit(commit)).rejects.toThrow();
          await expectNothingOf("order/1", "poison", 0);
          expect(await j.getDocument("orders", "other")).toBeUndefined();
          // The store is still usable afterwards.
          expect((await j.commit({ stream: "order/1", expectedVersion: 0, events: events(1), now: T0 })).version).toBe(
            1,
          );
        });
      }

      it("lets exactly one of two writers racing at the same expected version win, every round", async () => {
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
        await j.commit({ stream: "m/1", events: events(2), now: T0 });
        await j.migrate();
        await j.migrate();
        expect(await j.streamVersion("m/1")).toBe(2);
      });
    });

    describe("snapshots", () => {
      it("returns the latest snapshot of a stream only", async () => {
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
    });

    describe("commits sent together (group commit)", () => {
      /** Settle every commit, in submit order: a batch must give each its own fate. */
      const together = (commits: Commit[]) => Promise.allSettled(commits.map((c) => j.commit(c)));

      it("fails only the commit of a batch that reuses an effect key", async () => {
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
        const results = await together(
          Array.from({ length: 20 }, () => ({ stream: "s/1", events: events(1), now: T0 })),
        );
        expect(results.every((r) => r.status === "fulfilled")).toBe(true);
        expect(await j.streamVersion("s/1")).toBe(20);
      });
    });

    describe("rows handed over at commit (inserted leased)", () => {
      it("reports the rows it inserted with their seq, never a row whose id was already there", async () => {
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
        await j.commit({ outbox: [outboxRow("c"), outboxRow("a")], now: T0 });
        await j.commit({ outbox: [outboxRow("b")], now: T0 });
        const rows = await j.listOutbox();
        expect(rows.map((r) => r.id)).toEqual(["c", "a", "b"]);
        const seqs = rows.map((r) => r.seq);
        expect([...seqs].sort((x, y) => x - y)).toEqual(seqs);
        expect(new Set(seqs).size).toBe(3);
      });

      it("claims due rows with a lease; others get nothing until the lease expires", async () => {
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

      it("updates a row only for its lease owner, and never a done row", async () => {
        await j.commit({ outbox: [outboxRow("k1")], now: T0 });
        await j.claimOutbox({ owner: "d1", now: T0, leaseMs: 100, limit: 1 });
        expect(await j.updateOutbox("k1", "d2", { attempts: 5 }, T0 + 1)).toBe(false);
        expect(await j.updateOutbox("missing", "d1", { attempts: 5 }, T0 + 1)).toBe(false);
        expect(
          await j.updateOutbox("k1", "d1", { attempts: 1, lastError: "timeout", releaseLease: false }, T0 + 2),
        ).toBe(true);
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
        const woke = { served: 0, events: 0, all: 0 };
        const offs = [
          j.onOutbox(() => woke.served++, ["effect", "message"]),
          j.onOutbox(() => woke.events++, ["event"]),
          j.onOutbox(() => woke.all++),
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
          // An update does not say the row's category: every listener looks.
          const [claimed] = await j.claimOutbox({ owner: "d#1", now: T0, leaseMs: 1_000, limit: 1 });
          expect(claimed?.id).toBe("published");
          woke.served = 0;
          expect(await j.updateOutbox("published", "d#1", { attempts: 1, releaseLease: true }, T0 + 1)).toBe(true);
          await settle();
          expect(woke.served > 0).toBe(true);
          expect(woke.events > 0).toBe(true);
        } finally {
          for (const off of offs) off();
        }
      });
    });

    describe("outbox retention", () => {
      /** One row in every status, each last changed at T0 (long before the prune time used below). */
      const everyStatus = async () => {
        const ids = ["pending", "leased", "resolving", "reconcile", "dead", "done-old", "done-edge", "done-young"];
        await j.commit({ outbox: ids.map((id) => outboxRow(id)), now: T0 });
        // Claim the first two rows, then release "pending" again: "leased" stays held by d1.
        await j.claimOutbox({ owner: "d1", now: T0, leaseMs: 1_000_000, limit: 2 });
        await j.forceOutbox("pending", { status: "pending" }, T0);
        await j.forceOutbox("resolving", { status: "resolving" }, T0);
        await j.forceOutbox("reconcile", { status: "reconcile" }, T0);
        await j.forceOutbox("dead", { status: "dead", lastError: "gave up" }, T0);
        await j.commit({ outboxDone: [{ id: "done-old", outcome: "completed" }], now: T0 + 5 });
        await j.commit({ outboxDone: [{ id: "done-edge", outcome: "completed" }], now: T0 + 10 });
        await j.forceOutbox("done-young", { status: "done", outcome: "settled" }, T0 + 11);
        return ids;
      };

      it("deletes only done rows changed strictly before the time, and says how many", async () => {
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
        for (const limit of [0, -1, 1.5, Number.NaN]) {
          await expect(j.pruneOutbox(T0, limit)).rejects.toBeInstanceOf(InvalidInputError);
        }
      });

      it("forgets a pruned key: inserting it again makes a new pending row", async () => {
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
        (await j.readStream(stream)).map((e) => (e.data as { tag: string }).tag);

      it("marks a held row done and writes no inbox row; the same outcome again is a duplicate", async () => {
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

    describe("sequencing", () => {
      it("sets checkpoints, checking the expected version when given", async () => {
        expect(await j.getCheckpoint("c", "src")).toBe(0);
        await j.commit({ checkpoint: { consumer: "c", source: "src", version: 1, expected: 0 }, now: T0 });
        await j.commit({ checkpoint: { consumer: "c", source: "src", version: 2, expected: 1 }, now: T0 });
        await expect(
          j.commit({ checkpoint: { consumer: "c", source: "src", version: 3, expected: 1 }, now: T0 }),
        ).rejects.toBeInstanceOf(CheckpointConflictError);
        await expect(
          j.commit({ checkpoint: { consumer: "c", source: "other", version: 3, expected: 2 }, now: T0 }),
        ).rejects.toMatchObject({ expected: 2, actual: 0 });
        await expect(
          j.commit({ checkpoint: { consumer: "c", source: "src", version: 3, expected: 0 }, now: T0 }),
        ).rejects.toMatchObject({ expected: 0, actual: 2 });
        expect(await j.getCheckpoint("c", "src")).toBe(2);
        await j.commit({ checkpoint: { consumer: "c", source: "src", version: 9 }, now: T0 });
        expect(await j.getCheckpoint("c", "src")).toBe(9);
        expect(await j.getCheckpoint("c", "other")).toBe(0);
        expect(await j.getCheckpoint("d", "src")).toBe(0);
      });

      it("parks, lists in (source, version) order and unparks", async () => {
        await j.commit({
          park: [
            { consumer: "c", source: "s2", version: 5, message: { v: 5 } },
            { consumer: "c", source: "s1", version: 9, message: { v: 9 } },
            { consumer: "c", source: "s1", version: 3, message: { v: 3 } },
            { consumer: "d", source: "s1", version: 1, message: { v: 1 } },
          ],
          now: T0,
        });
        await j.commit({ park: [{ consumer: "c", source: "s1", version: 3, message: { v: "again" } }], now: T0 + 1 });
        const all = await j.listParked("c");
        expect(all.map((p) => [p.source, p.version])).toEqual([
          ["s1", 3],
          ["s1", 9],
          ["s2", 5],
        ]);
        expect(all[0]).toEqual({ consumer: "c", source: "s1", version: 3, message: { v: 3 }, parkedAt: T0 });
        expect((await j.listParked("c", "s1")).map((p) => p.version)).toEqual([3, 9]);
        await j.commit({
          unpark: [
            { consumer: "c", source: "s1", version: 3 },
            { consumer: "c", source: "s1", version: 42 },
          ],
          now: T0 + 2,
        });
        expect((await j.listParked("c")).map((p) => [p.source, p.version])).toEqual([
          ["s1", 9],
          ["s2", 5],
        ]);
        expect(await j.listParked("d", "s1")).toHaveLength(1);
        expect(await j.listParked("nobody")).toEqual([]);
      });
    });

    describe("dead letters", () => {
      it("inserts once, lists by filter in failure order, gets and resolves once", async () => {
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

    describe("documents", () => {
      it("upserts, deletes and lists documents sorted by id", async () => {
        await j.commit({
          documents: [
            { collection: "orders", id: "b", doc: { v: 1 } },
            { collection: "orders", id: "a", doc: { v: 1 } },
            { collection: "orders", id: "c", doc: { v: 1 } },
            { collection: "other", id: "a", doc: { v: 9 } },
          ],
          now: T0,
        });
        await j.commit({
          documents: [
            { collection: "orders", id: "b", doc: { v: 2 } },
            { collection: "orders", id: "c", doc: null },
            { collection: "orders", id: "z", doc: { v: 1 } },
            { collection: "orders", id: "z", doc: null },
          ],
          now: T0 + 1,
        });
        expect(await j.getDocument("orders", "b")).toEqual({
          collection: "orders",
          id: "b",
          doc: { v: 2 },
          updatedAt: T0 + 1,
        });
        expect(await j.getDocument("orders", "c")).toBeUndefined();
        expect(await j.getDocument("orders", "z")).toBeUndefined();
        expect((await j.listDocuments("orders")).map((d) => [d.id, d.doc])).toEqual([
          ["a", { v: 1 }],
          ["b", { v: 2 }],
        ]);
        expect((await j.listDocuments("orders", 1)).map((d) => d.id)).toEqual(["a"]);
        expect((await j.listDocuments("other")).map((d) => d.doc)).toEqual([{ v: 9 }]);
        expect(await j.listDocuments("none")).toEqual([]);
      });
    });
  });
}
