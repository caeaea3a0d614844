import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { encodeCommit } from "../../src/journal/encode.js";
import { copy, newOutboxRow } from "../../src/journal/rows.js";
import type { NewOutboxRow } from "../../src/journal/types.js";

/**
 * A row handed over at its commit is built from the JSON its commit encoded instead of a second
 * stringify: it must be the same row a copy gives, never sharing an object with the caller's.
 */
const row = (payload: unknown, result: unknown): NewOutboxRow => ({
  id: "k1",
  category: "effect",
  kind: "charge",
  stream: "order/1",
  payload,
  notBefore: 5,
  lease: { owner: "d#1", until: 30_005, attempts: 1, result },
});

describe("newOutboxRow after the commit encoded its row", () => {
  it("equals the row built by copying, for any JSON value in payload and result", () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.jsonValue(), (payload, result) => {
        const encoded = row(payload, result);
        encodeCommit({ outbox: [encoded], now: 5 });
        const fromText = newOutboxRow(encoded, 5, 7);
        const fromCopy = newOutboxRow(row(payload, result), 5, 7);
        expect(fromText).toEqual(fromCopy);
        expect(fromText.payload).toEqual(copy(payload));
      }),
    );
  });

  it("shares no object with the committed row", () => {
    const payload = { input: { orderId: "1", lines: [{ sku: "a" }] } };
    const result = { lastRunAt: 5 };
    const committed = row(payload, result);
    encodeCommit({ outbox: [committed], now: 5 });
    const handed = newOutboxRow(committed, 5, 1);
    expect(handed.payload).not.toBe(payload);
    (handed.payload as typeof payload).input.lines.push({ sku: "b" });
    (handed.result as typeof result).lastRunAt = 9;
    expect(payload.input.lines).toEqual([{ sku: "a" }]);
    expect(result.lastRunAt).toBe(5);
  });

  it("keeps what a store would: undefined properties dropped, dates as text", () => {
    const committed = row({ at: new Date(0), gone: undefined, list: [undefined] }, undefined);
    encodeCommit({ outbox: [committed], now: 5 });
    const handed = newOutboxRow(committed, 5, 1);
    expect(handed.payload).toEqual({ at: "1970-01-01T00:00:00.000Z", list: [null] });
    expect(handed.result).toBeNull();
  });
});
