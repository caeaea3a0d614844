import type { OutboxRow } from "../journal/types.js";
import { backoffDelay } from "./backoff.js";
import type { EffectRowState, PendingOutcome } from "./row-state.js";
import { deliver, escalate, goUnknown } from "./transition-owner.js";
import type { EffectEvent, EscalationReason, LookupAnswer, Transition } from "./transition-types.js";
import type { DefiniteResult, EffectPolicy, NotPerformed } from "./types.js";

/** The pure steps after a provider answered: a run's answer, a lookup's. */

const pendingOf = (answer: DefiniteResult, via: "run" | "lookup"): PendingOutcome =>
  answer.outcome === "succeeded"
    ? { outcome: "succeeded", result: answer.result, via }
    : { outcome: "failed", reason: answer.reason, via };

/**
 * A run answered (`row.attempts` counts it, `row.result` is the state its start recorded). A
 * definite answer goes to the owner; an ambiguous one is retried with the same key only where the
 * provider dedups (within `maxAttempts`), else the effect goes Unknown.
 */
export function runAnswered(
  row: OutboxRow,
  state: EffectRowState,
  policy: EffectPolicy,
  event: Extract<EffectEvent, { type: "run-answered" }>,
  now: number,
): Transition {
  const { answer } = event;
  if (answer.kind === "not-performed") {
    if (event.jitter === undefined) throw new TypeError("run-answered: a not-performed answer needs its jitter draw");
    return retryNotPerformed(row, state, policy, answer.answer, now, event.jitter);
  }
  if (answer.kind === "definite") return deliver(row, state, pendingOf(answer.answer, "run"));
  if (policy.providerDedups && row.attempts < policy.maxAttempts) {
    return {
      update: { status: "pending", notBefore: { backoff: policy.backoff, n: row.attempts }, lastError: answer.reason },
      note: "retried",
    };
  }
  return goUnknown(row, state, answer.reason, event.canLookUp);
}

/**
 * The provider asserted it did nothing: run again later with the same key. The attempt still
 * counts, but `rerunAllowed` keeps it from counting as ambiguous, so a provider that does not
 * dedup is not sent to Unknown. The wait grows on `policy.backoff` (exponential, capped), never
 * shorter than the provider's `retryAfterMs`. Past `notPerformedMaxAttempts` answers, or when the
 * next run would start later than `notPerformedMaxAgeMs` after the first, the effect escalates to
 * the reconciliation queue instead of being retried forever.
 * Failure window: a crash before this write leaves the attempt recorded as started, which the
 * next dispatcher treats as ambiguous (as any crash).
 */
function retryNotPerformed(
  row: OutboxRow,
  state: EffectRowState,
  policy: EffectPolicy,
  skipped: NotPerformed,
  now: number,
  jitter: number,
): Transition {
  const lastError = `not performed: ${skipped.reason}`;
  const count = (state.notPerformed ?? 0) + 1;
  const since = state.notPerformedSince ?? state.lastRunAt ?? now;
  const counted: EffectRowState = { ...state, notPerformed: count, notPerformedSince: since };
  const delay = Math.max(skipped.retryAfterMs ?? 0, backoffDelay(policy.backoff, count, { next: () => jitter }));
  const budget: EscalationReason | undefined =
    count >= policy.notPerformedMaxAttempts
      ? "max-attempts"
      : policy.notPerformedMaxAgeMs !== null && now + delay - since > policy.notPerformedMaxAgeMs
        ? "max-age"
        : undefined;
  if (budget) {
    const reason = `retries exhausted after ${row.attempts} attempts: ${lastError}`;
    return escalate(row, { ...counted, retriesExhausted: true }, reason, budget);
  }
  return {
    update: { status: "pending", notBefore: now + delay, lastError, result: { ...counted, rerunAllowed: true } },
    note: "retried-not-performed",
  };
}

/**
 * A lookup of an Unknown effect answered. Definite: the owner hears it. Not found, long after the
 * last run started (`rerunAfterNotFoundMs`): the provider never saw the key, so one more run with
 * the same key cannot double it. Otherwise look up again later, until `lookupAttempts`, then an
 * operator decides. Never a run unless a lookup proved it safe.
 */
export function lookupAnswered(
  row: OutboxRow,
  state: EffectRowState,
  policy: EffectPolicy,
  answer: LookupAnswer,
  now: number,
): Transition {
  const lookups = (state.lookups ?? 0) + 1;
  if (answer.kind === "definite") return deliver(row, { ...state, lookups }, pendingOf(answer.answer, "lookup"));
  const problem = answer.kind === "unclear" ? answer.problem : `lookup found no record of "${row.id}" at the provider`;
  if (answer.kind === "not-found") {
    const quietFor = state.lastRunAt === undefined ? Number.POSITIVE_INFINITY : now - state.lastRunAt;
    if (
      policy.rerunAfterNotFoundMs !== null &&
      quietFor >= policy.rerunAfterNotFoundMs &&
      row.attempts < policy.maxAttempts
    ) {
      return {
        update: {
          status: "pending",
          notBefore: now,
          lastError: problem,
          result: { ...state, lookups, rerunAllowed: true },
        },
      };
    }
  }
  if (lookups >= policy.lookupAttempts) return escalate(row, { ...state, lookups }, problem, "lookups-exhausted");
  return {
    update: {
      status: "resolving",
      notBefore: { backoff: policy.lookupBackoff, n: lookups + 1 },
      lastError: problem,
      result: { ...state, lookups },
    },
  };
}
