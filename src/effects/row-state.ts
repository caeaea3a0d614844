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
    result: z.unknown(),
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

/**
 * States already read, by the `result` object they were read from (a row's, or one the dispatcher
 * put on a row it holds, see `rowWithState`): read again without parsing. The protocol's
 * interpreter reads the state of the row it holds at every event. Callers never mutate a state
 * they read (every change is a spread), so one object can serve them all.
 */
const readStates = new WeakMap<object, EffectRowState>();

/** The row held in memory with `state` as its `result` (compacted, as a write would store it). */
export function rowWithState(row: OutboxRow, state: EffectRowState): OutboxRow {
  const result = compactState(state);
  readStates.set(result, result);
  return { ...row, result };
}

/** Read the state of a row that is not done. A foreign or empty `result` reads as a fresh state. */
export function effectRowState(row: OutboxRow): EffectRowState {
  if (row.status === "done") return {};
  const key = typeof row.result === "object" && row.result !== null ? row.result : undefined;
  const read = key && readStates.get(key);
  if (read) return read;
  const parsed = effectStateSchema.safeParse(row.result ?? {});
  if (!parsed.success) return {};
  const state = parsed.data as EffectRowState;
  if (key) readStates.set(key, state);
  return state;
}

export function messageRowState(row: OutboxRow): MessageRowState {
  if (row.status === "done") return {};
  const parsed = messageStateSchema.safeParse(row.result ?? {});
  return parsed.success ? (parsed.data as MessageRowState) : {};
}

/** Drop undefined fields so the stored JSON stays small and stable. */
export function compactState<T extends object>(state: T): T {
  return Object.fromEntries(Object.entries(state).filter(([, v]) => v !== undefined)) as T;
}
