import type { EffectOutcome } from "../core/decider.js";
import type { OutboxRow } from "../journal/types.js";
import type { EffectRowState, PendingOutcome } from "./row-state.js";
import type { EscalationReason, OwnerCommand, Transition } from "./transition-types.js";
import type { EffectPolicy } from "./types.js";

/** The pure steps that tell the owner an outcome, and what each of its answers leads to. */

/** The input the effect was requested with, as stored in its outbox row; every outcome carries it. */
const inputOf = (row: OutboxRow): unknown => (row.payload as { input?: unknown } | null)?.input ?? null;

/**
 * A known outcome for the owner, whose commit marks the row done. `state` carries the outcome as
 * `pending`, so that if the owner cannot be reached it stays on the row and no later pass asks the
 * provider again.
 */
export function deliver(row: OutboxRow, state: EffectRowState, pending: PendingOutcome): Transition {
  const extra = {
    ...(pending.by === undefined ? {} : { settledBy: pending.by }),
    ...(pending.note === undefined ? {} : { note: pending.note }),
  };
  const command: EffectOutcome =
    pending.outcome === "succeeded"
      ? {
          type: "oncely.effect.succeeded",
          key: row.id,
          kind: row.kind,
          input: inputOf(row),
          result: pending.result,
          attempt: row.attempts,
          via: pending.via,
          ...extra,
        }
      : {
          type: "oncely.effect.failed",
          key: row.id,
          kind: row.kind,
          input: inputOf(row),
          error: pending.reason,
          attempt: row.attempts,
          via: pending.via,
          ...extra,
        };
  return { command: { command, state: { ...state, pending } } };
}

/**
 * Ambiguous and not retryable: the owner hears Unknown first (a crash before the row's update
 * repeats this, which its inbox dedups), then the row starts resolving by lookup, or escalates.
 */
export function goUnknown(row: OutboxRow, state: EffectRowState, reason: string, canLookUp: boolean): Transition {
  const command: EffectOutcome = {
    type: "oncely.effect.unknown",
    key: row.id,
    kind: row.kind,
    input: inputOf(row),
    error: reason,
    attempt: row.attempts,
  };
  return { command: { command, state, canLookUp } };
}

/** Budget spent: the effect waits for an operator, in the reconciliation queue (the owner hears first). */
export function escalate(row: OutboxRow, state: EffectRowState, reason: string, why: EscalationReason): Transition {
  const command: EffectOutcome = {
    type: "oncely.effect.needs-reconciliation",
    key: row.id,
    kind: row.kind,
    input: inputOf(row),
    error: reason,
    attempt: row.attempts,
  };
  return { command: { command, state, escalation: why } };
}

/** The owner committed what it was told: a final outcome ends the step (its commit made the row done). */
export function ownerAccepted(
  row: OutboxRow,
  state: EffectRowState,
  policy: EffectPolicy,
  told: OwnerCommand,
  now: number,
): Transition {
  const { command } = told;
  if (command.type === "oncely.effect.unknown") {
    const unknown: EffectRowState = { ...state, unknownSince: state.unknownSince ?? now, lookups: 0 };
    if (!told.canLookUp || policy.lookupAttempts === 0) return escalate(row, unknown, command.error, "no-lookup");
    return {
      update: {
        status: "resolving",
        notBefore: { backoff: policy.lookupBackoff, n: 1 },
        lastError: command.error,
        result: unknown,
      },
    };
  }
  if (command.type === "oncely.effect.needs-reconciliation") {
    return {
      update: {
        status: "reconcile",
        lastError: command.error,
        result: { ...state, unknownSince: state.unknownSince ?? now },
      },
    };
  }
  return {};
}

/**
 * The owner refuses an outcome (e.g. its decide returns nothing for it): the same code refuses it
 * again, so no retry. The row goes dead, visible with the error, any known answer kept on it.
 */
export const ownerRejected = (state: EffectRowState, error: string): Transition => ({
  update: { status: "dead", lastError: `owner rejected the outcome: ${error}`, result: state },
});

/** A final outcome not recorded (the owner's journal unreachable): kept on the row, delivered again later. */
export const ownerUnreachable = (
  row: OutboxRow,
  state: EffectRowState,
  policy: EffectPolicy,
  error: string,
): Transition => ({
  update: {
    status: "pending",
    notBefore: { backoff: policy.backoff, n: row.attempts },
    lastError: `recording outcome failed: ${error}`,
    result: state,
  },
});
