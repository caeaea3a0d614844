import {
  CommandRejectedError,
  IdempotencyKeyReusedError,
  RetryableError,
  StorageUnavailableError,
  TerminalError,
} from "../base/errors.js";
import type { EffectOutcome } from "../core/decider.js";
import type { OutboxRow } from "../journal/types.js";
import { handlerCall } from "../observability/outbox-spans.js";
import { backoffDelay } from "./backoff.js";
import { correlated, errorText, rethrowCrash, type StepContext, writeRow } from "./context.js";
import { readEffectInput } from "./effect-input.js";
import { EffectTimeoutError } from "./errors.js";
import { compactState, type EffectRowState, effectRowState, type PendingOutcome } from "./row-state.js";
import { withTimeout } from "./timeout.js";
import type { DefiniteResult, EffectHandler, EffectPolicy, LookupResult, NotPerformed } from "./types.js";

/**
 * One claimed effect row, one step of the protocol. Every decision reads only the row (status,
 * attempts, state in `result`), so a fresh dispatcher after a crash continues exactly where the
 * last durable write left off.
 *
 * Failure windows (each resolved by the same key, never a new one):
 * - crash after `run` started and before its answer is recorded: the row still says
 *   `attempts = n`, so the next dispatcher treats attempt n as ambiguous: it retries with the same
 *   key if the provider dedups, else the effect goes Unknown (lookup / reconciliation).
 * - crash after the answer but before the owner's commit: same as above (the answer was only in memory).
 * - crash after the owner's commit: the row is done in that same commit; nothing is left to do.
 */
export async function effectStep(ctx: StepContext, row: OutboxRow): Promise<void> {
  const state = effectRowState(row);
  const policy = ctx.policyFor(row.kind);
  const handler = ctx.handlers.get(row.kind);
  if (state.pending) {
    const refused = state.pending.via === "operator" ? unreadable(handler, state.pending) : undefined;
    // An operator's result the owner could not read goes back to the queue, with why, never to the owner.
    if (refused)
      return escalate(
        ctx,
        row,
        { ...state, pending: undefined },
        `operator's settlement refused: ${refused}`,
        "settlement-refused",
      );
    return deliverOutcome(ctx, row, state, state.pending, row.attempts, policy);
  }
  if (row.status === "resolving") return resolveStep(ctx, row, state, policy, handler);
  if (!handler) {
    // Another dispatcher may serve this kind; back off so we do not spin on it.
    ctx.noHandler(row.kind);
    await writeRow(ctx, row, {
      notBefore: ctx.clock.now() + backoffDelay(policy.backoff, 1, ctx.random),
      lastError: `no handler registered for effect kind "${row.kind}" in dispatcher ${ctx.owner}`,
    });
    return;
  }
  const read = readEffectInput(row, handler);
  if ("unreadable" in read) {
    return escalate(ctx, row, state, `effect input unreadable: ${read.unreadable}`, "input-unreadable");
  }
  if ("tooNew" in read) return backOff(ctx, row, policy, read.tooNew);
  const mayRun =
    row.attempts === 0 || state.rerunAllowed === true || (policy.providerDedups && row.attempts < policy.maxAttempts);
  if (!mayRun) {
    const reason = row.lastError ?? "a previous run's outcome was never recorded (dispatcher stopped or crashed)";
    return goUnknown(ctx, row, state, policy, handler, reason);
  }
  await runStep(ctx, row, state, policy, handler, read.input);
}

/** A row this dispatcher cannot run (its code is older than the row's input): back off so another may. */
async function backOff(ctx: StepContext, row: OutboxRow, policy: EffectPolicy, reason: string): Promise<void> {
  await writeRow(ctx, row, {
    notBefore: ctx.clock.now() + backoffDelay(policy.backoff, 1, ctx.random),
    lastError: `${reason} (dispatcher ${ctx.owner})`,
  });
}

/**
 * A row handed over at commit with its first attempt already recorded in that commit (attempts 1,
 * `lastRunAt`): call the handler with no write before it. Only kinds whose provider dedups by key
 * are handed over this way, so a crash between that commit and the call costs a retry with the
 * same key, never an ambiguous Unknown the provider would not resolve.
 */
export async function recordedAttemptStep(ctx: StepContext, row: OutboxRow): Promise<void> {
  const handler = ctx.handlers.get(row.kind);
  // A lease already over (the process stalled) may have been taken: go through the lease-checked path.
  const leaseHeld = row.leaseUntil !== null && ctx.clock.now() < row.leaseUntil;
  const read = handler && readEffectInput(row, handler);
  if (!handler || !read || !("input" in read) || row.attempts !== 1 || !leaseHeld) return effectStep(ctx, row);
  const policy = ctx.policyFor(row.kind);
  return runStep(ctx, { ...row, attempts: 0 }, effectRowState(row), policy, handler, read.input, true);
}

/** The row as a claimer's first write would leave it (see `recordedAttemptStep`). */
export const firstAttemptRecorded = (now: number): { attempts: number; result: EffectRowState } => ({
  attempts: 1,
  result: { lastRunAt: now },
});

// biome-ignore lint/suspicious/noExplicitAny: handlers of every input and result type
type AnyHandler = EffectHandler<any, any>;

/** The input the effect was requested with, as stored in its outbox row; every outcome carries it. */
const inputOf = (row: OutboxRow): unknown => (row.payload as { input?: unknown } | null)?.input ?? null;

/** The input (upcast to the handler's version, see `readEffectInput`) through the handler's `parseInput` (a declared effect's schema), if it has one. */
function checkedInput(
  handler: AnyHandler,
  row: OutboxRow,
  raw: unknown,
): { ok: true; value: unknown } | { ok: false; error: string } {
  if (!handler.parseInput) return { ok: true, value: raw };
  try {
    return { ok: true, value: handler.parseInput(raw) };
  } catch (error) {
    return { ok: false, error: `effect "${row.id}" of kind "${row.kind}" not run: ${errorText(error)}` };
  }
}

/**
 * An input the handler cannot read is never run. Never run before: a terminal failure the owner
 * hears at once. Run before (by older code that read it): the provider may have acted, so it goes
 * to an operator.
 */
function refuseInput(ctx: StepContext, row: OutboxRow, state: EffectRowState, policy: EffectPolicy, error: string) {
  if (row.attempts > 0) return escalate(ctx, row, state, error, "input-unreadable");
  return deliverOutcome(ctx, row, state, { outcome: "failed", reason: error, via: "run" }, 0, policy);
}

/**
 * A succeeded answer's result through the handler's `parseResult`, replaced in place by what it
 * parses to; returns why it could not be read, or undefined when it reads.
 */
function unreadable(handler: AnyHandler | undefined, answer: DefiniteResult | PendingOutcome): string | undefined {
  if (answer.outcome !== "succeeded" || !handler?.parseResult) return undefined;
  try {
    answer.result = handler.parseResult(answer.result);
    return undefined;
  } catch (error) {
    return `unreadable result of kind "${handler.kind}": ${errorText(error)}`;
  }
}

async function runStep(
  ctx: StepContext,
  row: OutboxRow,
  state: EffectRowState,
  policy: EffectPolicy,
  handler: AnyHandler,
  input: unknown,
  recorded = false,
): Promise<void> {
  const checked = checkedInput(handler, row, input);
  if (!checked.ok) return refuseInput(ctx, row, state, policy, checked.error);
  const beforeHandlerFault = ctx.faults.hit("dispatch.beforeHandler");
  if (beforeHandlerFault) await beforeHandlerFault;
  const attempt = row.attempts + 1;
  const startedAt = ctx.clock.now();
  // Recorded before the call: from here on a crash makes this attempt count as ambiguous.
  // A run after one whose outcome was never known (a same-key retry, for a provider that dedups).
  const afterAmbiguous = row.attempts > 0 && state.rerunAllowed !== true;
  const started: EffectRowState = recorded
    ? state
    : {
        ...state,
        lastRunAt: startedAt,
        rerunAllowed: undefined,
        maybePerformed: state.maybePerformed || afterAmbiguous || undefined,
      };
  if (!recorded) {
    const held = await writeRow(ctx, row, { attempts: attempt, result: compactState(started), releaseLease: false });
    if (!held) return;
  }
  ctx.stats.runs++;
  let answer: DefiniteResult | undefined;
  let skipped: NotPerformed | undefined;
  let ambiguity = "";
  try {
    const raw = await handlerCall(ctx, "run", row, attempt, () =>
      withTimeout(ctx.clock, policy.timeoutMs, ctx.signal, (call) =>
        handler.run(checked.value, {
          idempotencyKey: row.id,
          attempt,
          get signal() {
            return call.signal;
          },
          kind: row.kind,
          owner: row.stream,
        }),
      ),
    );
    answer = definiteAnswer(raw);
    const badResult = answer && unreadable(handler, answer);
    if (badResult) {
      // A 2xx whose body we cannot read: the provider may have acted, so it is ambiguous.
      answer = undefined;
      ambiguity = badResult;
    }
    skipped = notPerformedAnswer(raw);
    if (!answer && !skipped && !ambiguity) {
      ambiguity = `handler for "${row.kind}" returned no succeeded/failed/not-performed outcome`;
    }
  } catch (error) {
    answer = thrownTerminal(error);
    skipped = thrownNotPerformed(error);
    ambiguity = errorText(error);
  }
  const afterProviderFault = ctx.faults.hit("dispatch.afterProvider");
  if (afterProviderFault) await afterProviderFault;
  const current = { ...row, attempts: attempt };
  if (skipped) return retryNotPerformed(ctx, current, started, policy, skipped);
  if (answer) {
    const pending: PendingOutcome =
      answer.outcome === "succeeded"
        ? { outcome: "succeeded", result: answer.result, via: "run" }
        : { outcome: "failed", reason: answer.reason, via: "run" };
    return deliverOutcome(ctx, current, started, pending, attempt, policy);
  }
  if (policy.providerDedups && attempt < policy.maxAttempts) {
    ctx.stats.retried++;
    ctx.metrics.outcomes.inc({ kind: row.kind, outcome: "retried" });
    await writeRow(ctx, current, {
      status: "pending",
      notBefore: ctx.clock.now() + backoffDelay(policy.backoff, attempt, ctx.random),
      lastError: ambiguity,
    });
    return;
  }
  await goUnknown(ctx, current, started, policy, handler, ambiguity);
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
async function retryNotPerformed(
  ctx: StepContext,
  row: OutboxRow,
  state: EffectRowState,
  policy: EffectPolicy,
  skipped: NotPerformed,
): Promise<void> {
  ctx.metrics.outcomes.inc({ kind: row.kind, outcome: "not-performed" });
  const now = ctx.clock.now();
  const lastError = `not performed: ${skipped.reason}`;
  const count = (state.notPerformed ?? 0) + 1;
  const since = state.notPerformedSince ?? state.lastRunAt ?? now;
  const counted: EffectRowState = { ...state, notPerformed: count, notPerformedSince: since };
  const delay = Math.max(skipped.retryAfterMs ?? 0, backoffDelay(policy.backoff, count, ctx.random));
  const budget: EscalationReason | undefined =
    count >= policy.notPerformedMaxAttempts
      ? "max-attempts"
      : policy.notPerformedMaxAgeMs !== null && now + delay - since > policy.notPerformedMaxAgeMs
        ? "max-age"
        : undefined;
  if (budget) {
    const reason = `retries exhausted after ${row.attempts} attempts: ${lastError}`;
    return escalate(ctx, row, { ...counted, retriesExhausted: true }, reason, budget);
  }
  ctx.stats.retried++;
  await writeRow(ctx, row, {
    status: "pending",
    notBefore: now + delay,
    lastError,
    result: compactState({ ...counted, rerunAllowed: true }),
  });
}

/** A lookup's answer as a metric label: one of a fixed set, whatever a handler returned. */
const lookupAnswer = (found: LookupResult | undefined): string =>
  found === undefined
    ? "error"
    : ["succeeded", "failed", "not-found", "unknown"].includes(String(found.outcome))
      ? String(found.outcome)
      : "invalid";

function notPerformedAnswer(raw: unknown): NotPerformed | undefined {
  if (typeof raw !== "object" || raw === null) return undefined;
  const r = raw as { outcome?: unknown; reason?: unknown; retryAfterMs?: unknown };
  if (r.outcome !== "not-performed") return undefined;
  const retryAfterMs =
    typeof r.retryAfterMs === "number" && Number.isFinite(r.retryAfterMs) ? r.retryAfterMs : undefined;
  return { outcome: "not-performed", reason: String(r.reason ?? "not performed"), retryAfterMs };
}

/**
 * oncely's `TerminalError` thrown by a handler: the provider refused for good. Not
 * `IdempotencyKeyReusedError` (a 409): the key went through before with another body, so the
 * provider may well have acted; that stays ambiguous, for lookup and reconciliation.
 */
const thrownTerminal = (error: unknown): DefiniteResult | undefined =>
  error instanceof TerminalError && !(error instanceof IdempotencyKeyReusedError)
    ? { outcome: "failed", reason: errorText(error) }
    : undefined;

/**
 * oncely's `RetryableError` thrown by a handler: it asserts nothing happened. Not its subclasses
 * that say the opposite: a timeout (the provider may still act) and `StorageUnavailableError`
 * (a write's outcome may be unknown) stay ambiguous.
 */
const thrownNotPerformed = (error: unknown): NotPerformed | undefined =>
  error instanceof RetryableError && !(error instanceof StorageUnavailableError || error instanceof EffectTimeoutError)
    ? { outcome: "not-performed", reason: errorText(error), retryAfterMs: error.retryAfterMs }
    : undefined;

function definiteAnswer(raw: unknown): DefiniteResult | undefined {
  if (typeof raw !== "object" || raw === null) return undefined;
  const r = raw as { outcome?: unknown; result?: unknown; reason?: unknown };
  if (r.outcome === "succeeded") return { outcome: "succeeded", result: r.result ?? null };
  if (r.outcome === "failed") return { outcome: "failed", reason: String(r.reason ?? "failed") };
  return undefined;
}

/** Record the outcome in the owner; its commit marks the row done. Kept on the row if that fails. */
async function deliverOutcome(
  ctx: StepContext,
  row: OutboxRow,
  state: EffectRowState,
  pending: PendingOutcome,
  attempt: number,
  policy: EffectPolicy,
): Promise<void> {
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
          attempt,
          via: pending.via,
          ...extra,
        }
      : {
          type: "oncely.effect.failed",
          key: row.id,
          kind: row.kind,
          input: inputOf(row),
          error: pending.reason,
          attempt,
          via: pending.via,
          ...extra,
        };
  try {
    await ctx.runtime.send(row.stream, command, correlated(row));
  } catch (error) {
    rethrowCrash(error);
    if (error instanceof CommandRejectedError) return buryRejected(ctx, row, { ...state, pending }, error);
    // The answer is known; keep it on the row so no later pass asks the provider again.
    ctx.logger.warn({ key: row.id, owner: row.stream, err: error }, "recording an effect outcome failed; will retry");
    await writeRow(ctx, row, {
      status: "pending",
      notBefore: ctx.clock.now() + backoffDelay(policy.backoff, attempt, ctx.random),
      lastError: `recording outcome failed: ${errorText(error)}`,
      result: compactState({ ...state, pending }),
    });
    return;
  }
  if (pending.outcome === "succeeded") ctx.stats.completed++;
  else ctx.stats.failed++;
  ctx.metrics.outcomes.inc({ kind: row.kind, outcome: pending.outcome });
  const outcomeCommittedFault = ctx.faults.hit("dispatch.outcomeCommitted");
  if (outcomeCommittedFault) await outcomeCommittedFault;
}

/** Tell the owner; false when it rejected the command (the row is then dead, see `buryRejected`). */
async function sendToOwner(ctx: StepContext, row: OutboxRow, state: EffectRowState, command: EffectOutcome) {
  try {
    await ctx.runtime.send(row.stream, command, correlated(row));
    return true;
  } catch (error) {
    if (!(error instanceof CommandRejectedError)) throw error;
    await buryRejected(ctx, row, state, error);
    return false;
  }
}

/**
 * The owner refuses an outcome (e.g. its decide returns nothing for it): the same code refuses it
 * again, so no retry. The row goes dead, visible with the error, any known answer kept on it.
 */
async function buryRejected(ctx: StepContext, row: OutboxRow, state: EffectRowState, error: CommandRejectedError) {
  ctx.stats.dead++;
  ctx.metrics.outcomes.inc({ kind: row.kind, outcome: "dead" });
  ctx.logger.error({ key: row.id, owner: row.stream, err: error }, "the owner rejected an effect outcome");
  await writeRow(ctx, row, {
    status: "dead",
    lastError: `owner rejected the outcome: ${errorText(error)}`,
    result: compactState(state),
  });
}

/** Ambiguous and not retryable: tell the owner (an Unknown event) and start resolving by lookup. */
async function goUnknown(
  ctx: StepContext,
  row: OutboxRow,
  state: EffectRowState,
  policy: EffectPolicy,
  handler: AnyHandler,
  reason: string,
): Promise<void> {
  // The owner hears first: a crash before the row update repeats this send, which its inbox dedups.
  const unknownCommand: EffectOutcome = {
    type: "oncely.effect.unknown",
    key: row.id,
    kind: row.kind,
    input: inputOf(row),
    error: reason,
    attempt: row.attempts,
  };
  if (!(await sendToOwner(ctx, row, state, unknownCommand))) return;
  ctx.stats.unknown++;
  ctx.metrics.outcomes.inc({ kind: row.kind, outcome: "unknown" });
  const unknown: EffectRowState = { ...state, unknownSince: state.unknownSince ?? ctx.clock.now(), lookups: 0 };
  if (!handler.lookup || policy.lookupAttempts === 0) {
    return escalate(ctx, row, unknown, reason, "no-lookup");
  }
  await writeRow(ctx, row, {
    status: "resolving",
    notBefore: ctx.clock.now() + backoffDelay(policy.lookupBackoff, 1, ctx.random),
    lastError: reason,
    result: compactState(unknown),
  });
}

/** Why an effect went to the reconciliation queue: the `reason` label of `oncely_effect_escalations_total`. */
type EscalationReason =
  | "max-attempts"
  | "max-age"
  | "lookups-exhausted"
  | "no-lookup"
  | "input-unreadable"
  | "settlement-refused";

/** Budget spent: the effect waits for an operator, in the reconciliation queue. */
async function escalate(
  ctx: StepContext,
  row: OutboxRow,
  state: EffectRowState,
  reason: string,
  why: EscalationReason,
): Promise<void> {
  const escalation: EffectOutcome = {
    type: "oncely.effect.needs-reconciliation",
    key: row.id,
    kind: row.kind,
    input: inputOf(row),
    error: reason,
    attempt: row.attempts,
  };
  if (!(await sendToOwner(ctx, row, state, escalation))) return;
  ctx.stats.reconcile++;
  ctx.metrics.outcomes.inc({ kind: row.kind, outcome: "reconcile" });
  ctx.metrics.escalations.inc({ kind: row.kind, reason: why });
  ctx.logger.warn(
    { key: row.id, kind: row.kind, owner: row.stream, attempts: row.attempts, escalation: why, reason },
    "effect needs reconciliation",
  );
  await writeRow(ctx, row, {
    status: "reconcile",
    lastError: reason,
    result: compactState({ ...state, unknownSince: state.unknownSince ?? ctx.clock.now() }),
  });
}

/** An Unknown effect: ask the provider by key. Never calls `run` unless a lookup proves it safe. */
async function resolveStep(
  ctx: StepContext,
  row: OutboxRow,
  state: EffectRowState,
  policy: EffectPolicy,
  handler: AnyHandler | undefined,
): Promise<void> {
  const lookup = handler?.lookup;
  if (!handler || !lookup) {
    return escalate(ctx, row, state, row.lastError ?? `no lookup for effect kind "${row.kind}"`, "no-lookup");
  }
  const read = readEffectInput(row, handler);
  if ("tooNew" in read) return backOff(ctx, row, policy, read.tooNew);
  if ("unreadable" in read) {
    return escalate(ctx, row, state, `effect input unreadable: ${read.unreadable}`, "input-unreadable");
  }
  const input = checkedInput(handler, row, read.input);
  // It may have run with that input (under older code): only an operator can say what happened.
  if (!input.ok) return escalate(ctx, row, state, input.error, "input-unreadable");
  const lookups = (state.lookups ?? 0) + 1;
  ctx.stats.lookups++;
  let found: LookupResult | undefined;
  let problem: string;
  try {
    found = await handlerCall(ctx, "lookup", row, row.attempts, () =>
      withTimeout(ctx.clock, policy.timeoutMs, ctx.signal, (call) =>
        lookup.call(handler, row.id, {
          get signal() {
            return call.signal;
          },
          input: input.value,
        }),
      ),
    );
    problem = `lookup of "${row.id}" answered ${JSON.stringify(found?.outcome ?? null)}`;
  } catch (error) {
    problem = `lookup failed: ${errorText(error)}`;
  }
  ctx.metrics.lookups.inc({ kind: row.kind, answer: lookupAnswer(found) });
  let answer = definiteAnswer(found);
  const badResult = answer && unreadable(handler, answer);
  if (badResult) {
    answer = undefined;
    problem = badResult;
  }
  if (answer) {
    const pending: PendingOutcome =
      answer.outcome === "succeeded"
        ? { outcome: "succeeded", result: answer.result, via: "lookup" }
        : { outcome: "failed", reason: answer.reason, via: "lookup" };
    return deliverOutcome(ctx, row, { ...state, lookups }, pending, row.attempts, policy);
  }
  const now = ctx.clock.now();
  if (found?.outcome === "not-found") {
    problem = `lookup found no record of "${row.id}" at the provider`;
    const quietFor = state.lastRunAt === undefined ? Number.POSITIVE_INFINITY : now - state.lastRunAt;
    if (
      policy.rerunAfterNotFoundMs !== null &&
      quietFor >= policy.rerunAfterNotFoundMs &&
      row.attempts < policy.maxAttempts
    ) {
      // The provider never saw the key and the last run is long over: running again (same key) cannot double it.
      await writeRow(ctx, row, {
        status: "pending",
        notBefore: now,
        lastError: problem,
        result: compactState({ ...state, lookups, rerunAllowed: true }),
      });
      return;
    }
  }
  if (lookups >= policy.lookupAttempts) return escalate(ctx, row, { ...state, lookups }, problem, "lookups-exhausted");
  await writeRow(ctx, row, {
    status: "resolving",
    notBefore: now + backoffDelay(policy.lookupBackoff, lookups + 1, ctx.random),
    lastError: problem,
    result: compactState({ ...state, lookups }),
  });
}
