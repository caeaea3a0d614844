import { InvalidInputError } from "../base/errors.js";
import { DEFAULT_SLICE_COUNT } from "../core/slices.js";
import type { ConformanceTestApi } from "./conformance-api.js";
import { outboxSlice } from "./outbox-slice.js";
import type { ClaimOptions, Journal, NewOutboxRow } from "./types.js";

const T0 = 1_700_000_000_000;

/** Streams whose ids fall in pairwise different slices among `count`. */
function streamsInDistinctSlices(count: number, n: number): string[] {
  const found = new Map<number, string>();
  for (let i = 0; found.size < Math.min(n, count); i++) {
    const stream = `order/s${i}`;
    const slice = outboxSlice({ category: "effect", stream, payload: null }, count);
    if (!found.has(slice)) found.set(slice, stream);
  }
  return [...found.values()];
}

const claim = (over: Partial<ClaimOptions> = {}): ClaimOptions => ({
  owner: "w",
  now: T0,
  leaseMs: 1_000,
  limit: 100,
  statuses: ["pending"],
  ...over,
});

/**
 * Claims by slice (`ClaimOptions.slices`), as tests run by `journalConformance` on every back end:
 * each row carries the slice of the actor that handles it, computed by the journal at insert.
 */
export function outboxSlicesConformance(api: ConformanceTestApi, journal: () => Journal): void {
  const { describe, it, expect } = api;
  describe("outbox slices", () => {
    const countOf = (j: Journal) => j.sliceCount ?? DEFAULT_SLICE_COUNT;

    it("claims only the rows of the given slices: an effect by its stream, a message by its receiver, an event by its stream", async () => {
      const j = journal();
      const [a, b, c] = streamsInDistinctSlices(countOf(j), 3) as [string, string, string];
      const sliceOf = (stream: string) => outboxSlice({ category: "effect", stream, payload: null }, countOf(j));
      const rows: NewOutboxRow[] = [
        { id: "effect-a", category: "effect", kind: "payment", stream: a, payload: {}, notBefore: T0 },
        // Sent by `a` to `b`: the receiver runs it, so it is in b's slice.
        {
          id: "message-a-to-b",
          category: "message",
          kind: "order",
          stream: a,
          payload: { to: b, command: { type: "Go" } },
          notBefore: T0,
        },
        { id: "event-c", category: "event", kind: "Placed", stream: c, payload: {}, notBefore: T0 },
        { id: "timer-b", category: "effect", kind: "oncely.timer", stream: b, payload: {}, notBefore: T0 },
      ];
      await j.commit({ outbox: rows, now: T0 });
      const ids = async (slices: number[]) =>
        (await j.claimOutbox(claim({ owner: `w${slices.join(",")}`, slices }))).map((r) => r.id).sort();
      expect(await ids([sliceOf(b)])).toEqual(["message-a-to-b", "timer-b"]);
      expect(await ids([sliceOf(a), sliceOf(c)])).toEqual(["effect-a", "event-c"]);
    });

    it("claims every slice without `slices`, nothing with an empty list", async () => {
      const j = journal();
      const streams = streamsInDistinctSlices(countOf(j), 4);
      await j.commit({
        outbox: streams.map((stream, i) => ({
          id: `row-${i}`,
          category: "effect",
          kind: "payment",
          stream,
          payload: {},
          notBefore: T0,
        })),
        now: T0,
      });
      expect(await j.claimOutbox(claim({ slices: [] }))).toHaveLength(0);
      expect(await j.claimOutbox(claim())).toHaveLength(4);
    });

    it("a malformed message (no receiver) takes its stream's slice; a stream that is no address hashes whole", async () => {
      const j = journal();
      const count = countOf(j);
      await j.commit({
        outbox: [
          { id: "bad-message", category: "message", kind: "x", stream: "order/m1", payload: { to: 7 }, notBefore: T0 },
          { id: "no-address", category: "event", kind: "x", stream: "plain", payload: {}, notBefore: T0 },
        ],
        now: T0,
      });
      const bad = outboxSlice({ category: "effect", stream: "order/m1", payload: null }, count);
      const plain = outboxSlice({ category: "event", stream: "plain", payload: null }, count);
      expect((await j.claimOutbox(claim({ owner: "a", slices: [bad] }))).map((r) => r.id)).toEqual(
        bad === plain ? ["bad-message", "no-address"] : ["bad-message"],
      );
      expect((await j.claimOutbox(claim({ owner: "b", slices: [plain] }))).map((r) => r.id)).toEqual(
        bad === plain ? [] : ["no-address"],
      );
    });

    it("keeps stream order within the slices claimed", async () => {
      const j = journal();
      const [a] = streamsInDistinctSlices(countOf(j), 1) as [string];
      const slice = outboxSlice({ category: "event", stream: a, payload: null }, countOf(j));
      await j.commit({
        outbox: ["e1", "e2"].map((id) => ({ id, category: "event", kind: "E", stream: a, payload: {}, notBefore: T0 })),
        now: T0,
      });
      const first = await j.claimOutbox(claim({ slices: [slice], inStreamOrder: true, categories: ["event"] }));
      expect(first.map((r) => r.id)).toEqual(["e1"]);
    });

    it("refuses a slice outside the journal's slice count", async () => {
      const j = journal();
      const error = await j.claimOutbox(claim({ slices: [countOf(j)] })).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(InvalidInputError);
      const negative = await j.claimOutbox(claim({ slices: [-1] })).catch((e: unknown) => e);
      expect(negative).toBeInstanceOf(InvalidInputError);
    });
  });
}
