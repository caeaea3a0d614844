import { z } from "zod";
import type { OutboxRow } from "../journal/types.js";

/**
 * What the dispatcher keeps on an effect's outbox row (in `result`) while the row is not done.
 * Everything the protocol needs to resume after a crash lives here, on the row, never in memory.
 * When the owner records the final outcome, the runtime overwrites `result` with that outcome.
 */
export interface EffectRowState {
  /** Clock time the last `run` started (for `rerunAfterNotFoundMs`). */
  lastRunAt?: number | undefined;
  /** Lookups done while Unknown. */
  lookups?: number | undefined;
  /** When the effect went Unknown. */
  unknownSince?: number | undefined;
  /** A lookup proved the provider never saw the key: one more run with the same key is safe. */
  rerunAllowed?: boolean | undefined;
  /** Not-performed answers counted against `notPerformedMaxAttempts` (reset by an operator's retry). */
  notPerformed?: number | undefined;
  /** When the first of those answers came (for `notPerformedMaxAgeMs`). */
  notPerformedSince?: number | undefined;
  /**
   * Escalated because its budget of not-performed answers ran out: a run with the same key again
   * is safe (see `Reconciliation.retry`), and unless `maybePerformed`, the provider never acted.
   */
  retriesExhausted?: boolean | undefined;
  /**
   * A run of this key started after one whose outcome was never known (a same-key retry of an
   * ambiguous run, which only a provider that dedups gets): the provider may have acted then.
   */
  maybePerformed?: boolean | undefined;
  /**
   * A known outcome (from run, lookup or an operator) not yet committed in the owner. The
   * dispatcher delivers it and never calls the handler again for this row.
   */
  pending?: PendingOutcome | undefined;
}

export type PendingOutcome =
  | { outcome: "succeeded"; result: unknown; via: "run" | "lookup" | "operator"; by?: string; note?: string }
  | { outcome: "failed"; reason: string; via: "run" | "lookup" | "operator"; by?: string; note?: string };

/** What a message's outbox row keeps while its ack is not yet recorded by the sender. */
export interface MessageRowState {
  ack?: { outcome: "delivered"; reply: unknown } | { outcome: "rejected"; error: string } | undefined;
}

const via = z.enum(["run", "lookup", "operator"]);
const pendingSchema = z.union([
  z.object({
    outcome: z.literal("succeeded"),
    // Optional: a handler that answered `undefined` leaves no `result` key once the row is stored as
    // JSON, and that known outcome must still be read as pending, never as a fresh state to run again.
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
]);
const effectStateSchema = z.object({
  lastRunAt: z.number().optional(),
  lookups: z.number().int().optional(),
  unknownSince: z.number().optional(),
  rerunAllowed: z.boolean().optional(),
  notPerformed: z.number().int().optional(),
  notPerformedSince: z.number().optional(),
  retriesExhausted: z.boolean().optional(),
  maybePerformed: z.boolean().optional(),
  pending: pendingSchema.optional(),
});
const messageStateSchema = z.object({
  ack: z
    .union([
      z.object({ outcome: z.literal("delivered"), reply: z.unknown() }),
      z.object({ outcome: z.literal("rejected"), error: z.string() }),
    ])
    .optional(),
});

/** The scalar fields of `EffectRowState`, each with the check its schema makes (`pending` is not one). */
const isNumber = (v: unknown) => typeof v === "number" && Number.isFinite(v);
const isBoolean = (v: unknown) => typeof v === "boolean";
const SCALAR_FIELDS = new Map<string, (value: unknown) => boolean>([
  ["lastRunAt", isNumber],
  ["lookups", Number.isSafeInteger],
  ["unknownSince", isNumber],
  ["rerunAllowed", isBoolean],
  ["notPerformed", Number.isSafeInteger],
  ["notPerformedSince", isNumber],
  ["retriesExhausted", isBoolean],
  ["maybePerformed", isBoolean],
]);

const isPlain = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && Object.getPrototypeOf(value) === Object.prototype;
const VIA = new Set(["run", "lookup", "operator"]);
const isOptionalText = (v: unknown) => v === undefined || typeof v === "string";

/** A pending outcome with no field the schema would drop (its `result` is taken as it is). */
function isPlainPending(value: unknown): boolean {
  if (!isPlain(value) || !VIA.has(value.via as string)) return false;
  const own = value.outcome === "succeeded" ? "result" : value.outcome === "failed" ? "reason" : undefined;
  if (own === undefined || (own === "reason" && typeof value.reason !== "string")) return false;
  if (!isOptionalText(value.by) || !isOptionalText(value.note)) return false;
  for (const key in value) {
    if (!Object.hasOwn(value, key)) return false;
    if (key !== own && key !== "outcome" && key !== "via" && key !== "by" && key !== "note") return false;
  }
  return true;
}

/**
 * A plain object of the state's fields only, each absent, undefined or what the schema accepts:
 * the schema would read it as an equal object, so it is its own state. The protocol's interpreter
 * reads the state of the row it holds at every event, which is always such an object (the state
 * it wrote); a row read from the journal is too, unless something else wrote its `result`.
 * Callers never mutate a state they read (every change is a spread), so the row's `result` can
 * serve as its state.
 */
function isPlainState(value: unknown): value is EffectRowState {
  if (!isPlain(value)) return false;
  for (const key in value) {
    if (!Object.hasOwn(value, key)) return false;
    const field = value[key];
    if (field === undefined) {
      if (key !== "pending" && !SCALAR_FIELDS.has(key)) return false;
      continue;
    }
    const check = SCALAR_FIELDS.get(key);
    if (check === undefined ? key !== "pending" || !isPlainPending(field) : !check(field)) return false;
  }
  return true;
}

/** The row held in memory with `state` as its `result` (compacted, as a write would store it). */
export function rowWithState(row: OutboxRow, state: EffectRowState): OutboxRow {
  return { ...row, result: compactState(state) };
}

/** Read the state of a row that is not done. A foreign or empty `result` reads as a fresh state. */
export function effectRowState(row: OutboxRow): EffectRowState {
  if (row.status === "done") return {};
  const result = row.result ?? {};
  if (isPlainState(result)) return result;
  const parsed = effectStateSchema.safeParse(result);
  return parsed.success ? (parsed.data as EffectRowState) : {};
}

export function messageRowState(row: OutboxRow): MessageRowState {
  if (row.status === "done") return {};
  const parsed = messageStateSchema.safeParse(row.result ?? {});
  return parsed.success ? (parsed.data as MessageRowState) : {};
}

/** Drop undefined fields so the stored JSON stays small and stable. */
export function compactState<T extends object>(state: T): T {
  const compact: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(state)) {
    if (value === undefined) continue;
    // An own "__proto__" (as JSON.parse makes) stays a field, as Object.fromEntries would keep it.
    if (key === "__proto__")
      Object.defineProperty(compact, key, { value, enumerable: true, writable: true, configurable: true });
    else compact[key] = value;
  }
  return compact as T;
}
