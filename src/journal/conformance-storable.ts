import { TerminalStorageError } from "../base/errors.js";
import type { ConformanceTestApi } from "./conformance-api.js";
import type { Commit, Journal, NewDeadLetter } from "./types.js";

const T0 = 1_700_000_000_000;
const NUL = "\u0000";
const LONE_HIGH = "\uD83D";
const LONE_LOW = "\uDCA9";

const deadLetter = (id: string, over: Partial<NewDeadLetter> = {}): NewDeadLetter => ({
  id,
  consumer: "orders-view",
  messageId: `m${NUL}1`,
  payload: {
    subject: "shop.ordering.OrderPlaced",
    body: `{"eventId":"e${NUL}1","sku":"x${LONE_HIGH}"}`,
    nested: { [`key${NUL}`]: [`a${LONE_LOW}b`, "😀 paired stays", "literal \\u0000 text"] },
  },
  error: `invalid byte sequence for encoding "UTF8": 0x00 in e${NUL}1`,
  stack: `Error: at e${NUL}1${LONE_HIGH}`,
  attempts: 1,
  firstFailedAt: T0,
  lastFailedAt: T0 + 1,
  ...over,
});

/**
 * The storage rule for text, as tests (run by `journalConformance` on every back end): a dead
 * letter holds any text and gives it back exactly; every other part of a commit refuses text no
 * store can hold (NUL, unpaired surrogates) with `TerminalStorageError`, writing nothing.
 */
export function storableTextConformance(api: ConformanceTestApi, journal: () => Journal): void {
  const { describe, it, expect } = api;
  describe("text no store can hold (NUL, unpaired surrogates)", () => {
    it("keeps a dead letter with such text in its message id, payload, error and stack, exactly", async () => {
      const j = journal();
      const letter = deadLetter("orders-view|m#1");
      await j.commit({ deadLetters: [letter], now: T0 });
      const expected = { ...letter, status: "open", resolvedAt: null };
      expect(await j.getDeadLetter(letter.id)).toEqual(expected);
      expect(await j.listDeadLetters({ consumer: "orders-view" })).toEqual([expected]);
      expect(await j.resolveDeadLetter(letter.id, "discarded", T0 + 2)).toBe(true);
      expect(await j.getDeadLetter(letter.id)).toMatchObject({ messageId: letter.messageId, status: "discarded" });
    });

    it("keeps a payload that looks like the escape wrapper, and a literal backslash-u text, exactly", async () => {
      const j = journal();
      const lookalike = deadLetter("lookalike", {
        messageId: "plain",
        payload: { "oncely:escaped": '{"messageId":"forged"}', text: "\\u0000 \\\\u0000" },
        error: "plain \\u0000",
        stack: null,
      });
      await j.commit({ deadLetters: [lookalike], now: T0 });
      expect(await j.getDeadLetter("lookalike")).toMatchObject({
        messageId: "plain",
        payload: lookalike.payload,
        error: "plain \\u0000",
        stack: null,
      });
    });

    const refusals: [string, Commit][] = [
      ["a stream name", { stream: `order/${NUL}`, events: [{ eventId: "ok", type: "T", data: {} }], now: T0 }],
      ["an event id", { stream: "order/1", events: [{ eventId: `e${NUL}`, type: "T", data: {} }], now: T0 }],
      ["event data", { stream: "order/1", events: [{ eventId: "e1", type: "T", data: { sku: `x${NUL}` } }], now: T0 }],
      ["an event type", { stream: "order/1", events: [{ eventId: "e1", type: `T${LONE_HIGH}`, data: {} }], now: T0 }],
      ["an inbox message id", { inbox: { consumer: "c", messageId: `m${LONE_LOW}`, reply: null }, now: T0 }],
      ["an inbox reply", { inbox: { consumer: "c", messageId: "m", reply: { [`k${NUL}`]: 1 } }, now: T0 }],
      ["a checkpoint source", { checkpoint: { consumer: "c", source: `s${NUL}`, version: 1 }, now: T0 }],
      ["a parked message", { park: [{ consumer: "c", source: "s", version: 2, message: [`${NUL}`] }], now: T0 }],
      ["a document id", { documents: [{ collection: "orders", id: `o${NUL}`, doc: {} }], now: T0 }],
      ["a document", { documents: [{ collection: "orders", id: "o", doc: { note: `${LONE_HIGH}!` } }], now: T0 }],
      [
        "an outbox payload",
        {
          outbox: [{ id: "k", category: "effect", kind: "p", stream: "order/1", payload: `${NUL}`, notBefore: T0 }],
          now: T0,
        },
      ],
      ["a dead letter id", { deadLetters: [deadLetter(`dl${NUL}`)], now: T0 }],
    ];
    for (const [what, commit] of refusals) {
      it(`refuses ${what} holding such text with TerminalStorageError, writing nothing of the commit`, async () => {
        const j = journal();
        const withDocument: Commit = {
          ...commit,
          documents: [...(commit.documents ?? []), { collection: "witness", id: "w", doc: { written: true } }],
        };
        const error = await j.commit(withDocument).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(TerminalStorageError);
        expect(await j.getDocument("witness", "w")).toBeUndefined();
        expect(await j.streamVersion("order/1")).toBe(0);
        expect(await j.getInbox("c", "m")).toBeUndefined();
        expect(await j.getOutbox("k")).toBeUndefined();
        expect(await j.listParked("c")).toEqual([]);
      });
    }

    it("stores paired surrogates (emoji) and escaped-looking text as ordinary text", async () => {
      const j = journal();
      const data = { note: "😀 \\u0000 \\ud83d" };
      await j.commit({ stream: "order/1", events: [{ eventId: "e-😀", type: "T", data }], now: T0 });
      expect((await j.readStream("order/1"))[0]).toMatchObject({ eventId: "e-😀", data });
    });
  });
}
