import type { OutboxRow } from "../journal/types.js";
import { type EffectRowState, effectRowState } from "./row-state.js";
import { lookupAnswered, runAnswered } from "./transition-answers.js";
import { deliver, escalate, goUnknown, ownerAccepted, ownerRejected, ownerUnreachable } from "./transition-owner.js";
import type { EffectEvent, Transition } from "./transition-types.js";
import type { EffectPolicy } from "./types.js";

/**
 * The effect protocol as a pure function: from the row (status, attempts, the state in `result`),
 * the kind's policy, what just happened and the time, what to do next — a row write, an outcome
 * for the owner, a provider call — as data. Nothing here does I/O, reads a clock or draws a random
 * number (a backoff's jitter is drawn by the interpreter, `effect-step.ts`, or given with the event
 * when the decision depends on it). So every decision reads only the row: a fresh dispatcher after
 * a crash continues exactly where the last durable write left off.
 *
 * `Pending → run → Completed | Failed | (ambiguous) → Unknown → lookup → Completed | Failed |
 * reconciliation`, with same-key retries on backoff, budgets for not-performed answers and
 * lookups, and an operator's settlement. The table of states and events:
 * docs/design/effect-transition.md.
 */
export function effectTransition(row: OutboxRow, policy: EffectPolicy, event: EffectEvent, now: number): Transition {
  const state = effectRowState(row);
  switch (event.type) {
    case "claimed":
      return claimed(row, state, policy, event);
    case "run-starting":
      return runStarting(row, state, event.recorded, now);
    case "run-answered":
      return runAnswered(row, state, policy, event, now);
    case "lookup-answered":
      return lookupAnswered(row, state, policy, event.answer, now);
    case "owner-accepted":
      return ownerAccepted(row, state, policy, event.command, now);
    case "owner-rejected":
      return ownerRejected(state, event.error);
    case "owner-unreachable":
      return ownerUnreachable(row, state, policy, event.error);
  }
}

const RUN_NEVER_RECORDED = "a previous run's outcome was never recorded (dispatcher stopped or crashed)";

/** A row just claimed: deliver a known outcome, look up an Unknown one, run, or go Unknown. */
function claimed(
  row: OutboxRow,
  state: EffectRowState,
  policy: EffectPolicy,
  event: Extract<EffectEvent, { type: "claimed" }>,
): Transition {
  const { handler, input } = event;
  if (state.pending) {
    const settlement = state.pending.via === "operator" ? event.settlement : undefined;
    // An operator's result the owner could not read goes back to the queue, with why, never to the owner.
    if (settlement && !settlement.ok) {
      const reason = `operator's settlement refused: ${settlement.reason}`;
      return escalate(row, { ...state, pending: undefined }, reason, "settlement-refused");
    }
    const pending =
      settlement?.ok && state.pending.outcome === "succeeded"
        ? { ...state.pending, result: settlement.result }
        : state.pending;
    return deliver(row, { ...state, pending }, pending);
  }
  if (row.status === "resolving") {
    if (!handler?.lookup || !input) {
      return escalate(row, state, row.lastError ?? `no lookup for effect kind "${row.kind}"`, "no-lookup");
    }
    if ("tooNew" in input) return backOff(policy, `${input.tooNew} (dispatcher ${event.dispatcher})`);
    if ("unreadable" in input) {
      return escalate(row, state, `effect input unreadable: ${input.unreadable}`, "input-unreadable");
    }
    // It may have run with that input (under older code): only an operator can say what happened.
    if ("invalid" in input) return escalate(row, state, input.invalid, "input-unreadable");
    return { call: "lookup" };
  }
  if (!handler || !input) {
    // Another dispatcher may serve this kind; back off so we do not spin on it.
    const reason = `no handler registered for effect kind "${row.kind}" in dispatcher ${event.dispatcher}`;
    return { ...backOff(policy, reason), note: "no-handler" };
  }
  if ("unreadable" in input) {
    return escalate(row, state, `effect input unreadable: ${input.unreadable}`, "input-unreadable");
  }
  // This dispatcher's code is older than the row's input: back off so another may run it.
  if ("tooNew" in input) return backOff(policy, `${input.tooNew} (dispatcher ${event.dispatcher})`);
  const mayRun =
    row.attempts === 0 || state.rerunAllowed === true || (policy.providerDedups && row.attempts < policy.maxAttempts);
  if (!mayRun) return goUnknown(row, state, row.lastError ?? RUN_NEVER_RECORDED, handler.lookup);
  if ("invalid" in input) {
    // Never run before: a terminal failure the owner hears at once. Run before (by older code that
    // read it): the provider may have acted, so it goes to an operator.
    if (row.attempts > 0) return escalate(row, state, input.invalid, "input-unreadable");
    return deliver(row, state, { outcome: "failed", reason: input.invalid, via: "run" });
  }
  return { call: "run" };
}

const backOff = (policy: EffectPolicy, lastError: string): Transition => ({
  update: { notBefore: { backoff: policy.backoff, n: 1 }, lastError },
});

/**
 * The attempt's record, written before the call (keeping the lease): from here on a crash makes
 * this attempt count as ambiguous. A run after one whose outcome was never known (a same-key retry,
 * for a provider that dedups) marks the key `maybePerformed`.
 */
function runStarting(row: OutboxRow, state: EffectRowState, recorded: boolean, now: number): Transition {
  const afterAmbiguous = row.attempts > 0 && state.rerunAllowed !== true;
  const started: EffectRowState = recorded
    ? state
    : {
        ...state,
        lastRunAt: now,
        rerunAllowed: undefined,
        maybePerformed: state.maybePerformed || afterAmbiguous || undefined,
      };
  return { update: { attempts: row.attempts + 1, result: started, releaseLease: false }, call: "run" };
}
