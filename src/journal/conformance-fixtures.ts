import type { Random } from "../core/clock.js";
import type { ConformanceSubject, ConformanceTestApi } from "./conformance-api.js";
import type { Commit, Journal, NewEvent, NewOutboxRow } from "./types.js";

export const T0 = 1_700_000_000_000;

/**
 * The seed of the ids the suite draws. The random is seeded anew before every test, so a test
 * draws the same ids whether it runs alone or with the others, on every run: a failure reproduces.
 */
export const CONFORMANCE_SEED = 0x0c_e1_20_26;

export const outboxRow = (id: string, over: Partial<NewOutboxRow> = {}): NewOutboxRow => ({
  id,
  category: "effect",
  kind: "payment",
  stream: "order/1",
  payload: { id },
  notBefore: T0,
  ...over,
});

/** Strings a store must keep exactly: emoji, CJK, right-to-left, combining marks, control chars (no NUL). */
export const U_ID = "注文-🧾-שלום-\u0001";
export const UNICODE =
  "emoji 🧾💳🚚 👩🏽‍💻 cjk 注文処理 中文 한국어 rtl שלום مرحبا combining e\u0301 ctl \u0001\u0007\t\n\r\u001f quotes \"'\\ end";

/** What every part of the suite is given: the test functions, the running test's journal, and the helpers. */
export interface ConformanceContext {
  api: ConformanceTestApi;
  /** The journal of the running test (a new one before each test). */
  journal(): Journal;
  /** The subject of the running test (to reopen its store, or open a second writer on it). */
  subject(): ConformanceSubject;
  /** `n` new events tagged `tag`, numbered from `from + 1`; their ids end with a seeded random part. */
  events(n: number, tag?: string, from?: number): NewEvent[];
  /** Everything a commit can write, so atomicity tests can check that none of it landed. */
  fullCommit(stream: string, expectedVersion: number, tag: string): Commit;
  /** Nothing of `fullCommit(stream, …, tag)` is in the journal (the inbox row aside, when `inboxHeld`). */
  expectNothingOf(stream: string, tag: string, versionBefore: number, inboxHeld?: boolean): Promise<void>;
}

/** The context over the running test's subject and random (both replaced before each test). */
export function conformanceContext(
  api: ConformanceTestApi,
  running: () => { subject: ConformanceSubject; random: Random },
): ConformanceContext {
  const { expect } = api;
  const journal = () => running().subject.journal;
  const events = (n: number, tag = "e", from = 0): NewEvent[] =>
    Array.from({ length: n }, (_, i) => ({
      eventId: `${tag}-${from + i + 1}-${running().random.next().toString(36).slice(2)}`,
      type: "Happened",
      data: { tag, n: from + i + 1 },
    }));

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
    const j = journal();
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

  return { api, journal, subject: () => running().subject, events, fullCommit, expectNothingOf };
}
