import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { compactState, effectRowState, rowWithState } from "../../src/effects/row-state.js";
import type { OutboxRow } from "../../src/journal/types.js";

// effectRowState reads a plain state of scalar fields as the object itself, and anything else
// through the schema: both must read every `result` as the schema alone reads it. The schema is
// restated here, as the effect row's state is specified (src/effects/row-state.ts).
const via = z.enum(["run", "lookup", "operator"]);
const schema = z.object({
  lastRunAt: z.number().optional(),
  lookups: z.number().int().optional(),
  unknownSince: z.number().optional(),
  rerunAllowed: z.boolean().optional(),
  notPerformed: z.number().int().optional(),
  notPerformedSince: z.number().optional(),
  retriesExhausted: z.boolean().optional(),
  maybePerformed: z.boolean().optional(),
  pending: z
    .union([
      z.object({
        outcome: z.literal("succeeded"),
        result: z.unknown().optional(),
        via,
        by: z.string().optional(),
        note: z.string().optional(),
      }),
      z.object({
        outcome: z.literal("failed"),
        reason: z.string(),
        via,
        by: z.string().optional(),
        note: z.string().optional(),
      }),
    ])
    .optional(),
});
const bySchema = (result: unknown) => {
  const parsed = schema.safeParse(result ?? {});
  return parsed.success ? parsed.data : {};
};

const row = (result: unknown, status: OutboxRow["status"] = "pending"): OutboxRow => ({
  id: "k",
  seq: 1,
  category: "effect",
  kind: "payment",
  stream: "order/o-1",
  payload: {},
  status,
  attempts: 1,
  notBefore: 0,
  leaseOwner: null,
  leaseUntil: null,
  lastError: null,
  outcome: null,
  result,
  createdAt: 0,
  updatedAt: 0,
});

const FIELDS = [
  "lastRunAt",
  "lookups",
  "unknownSince",
  "rerunAllowed",
  "notPerformed",
  "notPerformedSince",
  "retriesExhausted",
  "maybePerformed",
];
const scalar = fc.oneof(
  fc.integer(),
  fc.double(),
  fc.constantFrom(Number.NaN, Number.POSITIVE_INFINITY, 2 ** 53, -0, 1.5),
  fc.boolean(),
  fc.string(),
  fc.constant(undefined),
  fc.constant(null),
);
const optionalText = fc.oneof(fc.string(), fc.constant(undefined), fc.integer());
const pending = fc.oneof(
  fc.record(
    {
      outcome: fc.constantFrom("succeeded", "failed"),
      result: fc.oneof(fc.jsonValue(), fc.constant(undefined)),
      via: fc.constantFrom("run", "lookup", "operator", "x"),
      by: optionalText,
      note: optionalText,
      extra: scalar,
    },
    { requiredKeys: ["outcome", "via"] },
  ),
  fc.record(
    { outcome: fc.constant("failed"), reason: scalar, via: fc.constantFrom("run", "operator"), by: optionalText },
    { requiredKeys: ["outcome", "reason", "via"] },
  ),
  scalar,
);
const state = fc.dictionary(fc.constantFrom(...FIELDS, "pending", "other", "__proto__"), fc.oneof(scalar, pending), {
  maxKeys: 6,
});
const result = fc.oneof(
  state,
  state.map((s) => JSON.parse(JSON.stringify(s)) as unknown),
  fc.constantFrom(null, undefined, [], [1], "text", 7, true),
  state.map((s) => Object.assign(Object.create({ lookups: 2 }), s) as unknown),
);

describe("an effect row's state", () => {
  it("is read as the schema reads it, whatever the row's result holds", () => {
    fc.assert(
      fc.property(result, (r) => {
        expect(effectRowState(row(r))).toStrictEqual(bySchema(r));
      }),
      { numRuns: 5_000 },
    );
  });

  it("refuses what the schema refuses in a plain state: a number not finite, a count not an integer, a key unknown", () => {
    for (const bad of [
      { lastRunAt: Number.NaN },
      { unknownSince: Number.POSITIVE_INFINITY },
      { lookups: 1.5 },
      { lookups: 2 ** 53 },
      { rerunAllowed: "yes" },
    ]) {
      expect(effectRowState(row(bad))).toEqual({});
    }
    expect(effectRowState(row({ lookups: 2, other: 1 }))).toStrictEqual({ lookups: 2 });
    expect(effectRowState(row({ pending: { outcome: "failed", via: "run" } }))).toEqual({});
    expect(effectRowState(row({ pending: { outcome: "failed", reason: "r", via: "run", by: 3 } }))).toEqual({});
    expect(effectRowState(row({ pending: { outcome: "succeeded", via: "run", note: null } }))).toEqual({});
    expect(effectRowState(row({ pending: { outcome: "succeeded", result: 1, via: "x" } }))).toEqual({});
    const extra = { pending: { outcome: "succeeded", result: 1, via: "run", other: 2 } };
    expect(effectRowState(row(extra))).toStrictEqual({ pending: { outcome: "succeeded", result: 1, via: "run" } });
  });

  it("reads a state with a pending outcome as the object itself", () => {
    const result = { lastRunAt: 5, pending: { outcome: "succeeded", result: { id: "p" }, via: "run", note: "n" } };
    expect(effectRowState(row(result))).toBe(result);
  });

  it("keeps a success whose result was undefined, which its stored JSON holds without a result key", () => {
    // A handler that answered undefined: the outcome is known, and must not read as a fresh state to run again.
    const stored = JSON.parse(JSON.stringify({ pending: { outcome: "succeeded", result: undefined, via: "run" } }));
    expect(Object.hasOwn(stored.pending, "result")).toBe(false);
    expect(effectRowState(row(stored)).pending).toEqual({ outcome: "succeeded", via: "run" });
    expect(effectRowState(row(Object.assign(Object.create(null), stored))).pending).toEqual({
      outcome: "succeeded",
      via: "run",
    });
  });

  it("of a done row is empty", () => {
    expect(effectRowState(row({ lookups: 3 }, "done"))).toEqual({});
  });

  it("is held by rowWithState compacted, and read back as written", () => {
    fc.assert(
      fc.property(state, (s) => {
        const held = rowWithState(row({ other: 1 }), s as never);
        expect(held.result).toStrictEqual(Object.fromEntries(Object.entries(s).filter(([, v]) => v !== undefined)));
        expect(effectRowState(held)).toStrictEqual(bySchema(held.result));
        expect(compactState(s)).toStrictEqual(held.result);
      }),
    );
  });
});
