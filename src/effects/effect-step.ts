import { CommandRejectedError } from "../base/errors.js";
import type { OutboxRow, OutboxUpdate } from "../journal/types.js";
import { handlerCall } from "../observability/outbox-spans.js";
import {
  definiteAnswer,
  lookupAnswerLabel,
  notPerformedAnswer,
  thrownNotPerformed,
  thrownTerminal,
} from "./answers.js";
import { backoffDelay } from "./backoff.js";
import { correlated, errorText, rethrowCrash, type StepContext, writeRow } from "./context.js";
import { type EffectInput, readEffectInput } from "./effect-input.js";
import { compactState, type EffectRowState, effectRowState, rowWithState } from "./row-state.js";
import { withTimeout } from "./timeout.js";
import { effectTransition } from "./transition.js";
import type {
  EffectEvent,
  EffectUpdate,
  InputCheck,
  LookupAnswer,
  OwnerCommand,
  RunAnswer,
  Transition,
} from "./transition-types.js";
import type { DefiniteResult, EffectHandler, EffectPolicy, LookupResult } from "./types.js";

/**
 * One claimed effect row, one step of the protocol: the interpreter of `effectTransition`. It does
 * the I/O (the handler's `run` and `lookup`, the owner's commit of an outcome, the row's writes),
 * feeds each answer back as an event, and carries out what comes back. Every decision is the pure
 * transition's and reads only the row, so a fresh dispatcher after a crash continues exactly where
 * the last durable write left off.
 *
 * Failure windows (each resolved by the same key, never a new one):
 * - crash after `run` started and before its answer is recorded: the row still says
 *   `attempts = n`, so the next dispatcher treats attempt n as ambiguous: it retries with the same
 *   key if the provider dedups, else the effect goes Unknown (lookup / reconciliation).
 * - crash after the answer but before the owner's commit: same as above (the answer was only in memory).
 * - crash after the owner's commit: the row is done in that same commit; nothing is left to do.
 */
export function effectStep(ctx: StepContext, row: OutboxRow): Promise<void> {
  return interpret(ctx, row, false);
}

/**
 * A row handed over at commit with its first attempt already recorded in that commit (attempts 1,
 * `lastRunAt`): call the handler with no write before it. Only kinds whose provider dedups by key
 * are handed over this way, so a crash between that commit and the call costs a retry with the
 * same key, never an ambiguous Unknown the provider would not resolve.
 */
export function recordedAttemptStep(ctx: StepContext, row: OutboxRow): Promise<void> {
  const handler = ctx.handlers.get(row.kind);
  // A lease already over (the process stalled) may have been taken: go through the lease-checked path.
  const leaseHeld = row.leaseUntil !== null && ctx.clock.now() < row.leaseUntil;
  const read = handler && readEffectInput(row, handler);
  if (!handler || !read || !("input" in read) || row.attempts !== 1 || !leaseHeld) return effectStep(ctx, row);
  // As the row stood before the claimer's first write: the run is attempt 1, its record already written.
  return interpret(ctx, { ...row, attempts: 0 }, true, read);
}

/** The row as a claimer's first write would leave it (see `recordedAttemptStep`). */
export const firstAttemptRecorded = (now: number): { attempts: number; result: EffectRowState } => ({
  attempts: 1,
  result: { lastRunAt: now },
});

type ClaimedEvent = Extract<EffectEvent, { type: "claimed" }>;

// biome-ignore lint/suspicious/noExplicitAny: handlers of every input and result type
type AnyHandler = EffectHandler<any, any>;

/**
 * Claim, then loop: tell the owner, call the provider, or write the row, until a write (or the
 * owner's commit of a final outcome) ends the step. The row is held in memory as the protocol left
 * it (attempt recorded, the state the owner is being told), never read again.
 */
async function interpret(ctx: StepContext, claimedRow: OutboxRow, recorded: boolean, read?: EffectInput) {
  let row = claimedRow;
  const policy = ctx.policyFor(row.kind);
  const handler = ctx.handlers.get(row.kind);
  const input = handler ? checkInput(handler, row, read ?? readEffectInput(row, handler)) : undefined;
  const claimed: EffectEvent = {
    type: "claimed",
    dispatcher: ctx.owner,
    handler: handler && { lookup: handler.lookup !== undefined },
    input: input?.check,
    settlement: checkSettlement(handler, row),
  };
  let now = ctx.clock.now();
  let next = effectTransition(row, policy, claimed, now);
  for (;;) {
    count(ctx, row, next);
    if (next.command) {
      row = rowWithState(row, next.command.state);
      const answer = await tell(ctx, row, next.command);
      now = ctx.clock.now();
      next = effectTransition(row, policy, answer, now);
      continue;
    }
    if (next.call && handler && input && "value" in input) {
      const event =
        next.call === "run"
          ? await run(ctx, row, policy, handler, input.value, recorded)
          : await lookUp(ctx, row, policy, handler, input.value);
      if (!event) return; // the lease was lost before the run: another dispatcher owns the row
      row = event.row;
      now = ctx.clock.now();
      next = effectTransition(row, policy, event.event, now);
      continue;
    }
    if (next.call) throw new Error(`effect "${row.id}": a ${next.call} was asked for without a handler and input`);
    if (next.update) await writeRow(ctx, row, outboxUpdate(ctx, next.update, now));
    return;
  }
}

/** The row's input through upcasting and the handler's `parseInput`: the value to call with, and the check. */
function checkInput(handler: AnyHandler, row: OutboxRow, read: EffectInput): { check: InputCheck; value?: unknown } {
  if (!("input" in read)) return { check: read };
  if (!handler.parseInput) return { check: { ok: true }, value: read.input };
  try {
    return { check: { ok: true }, value: handler.parseInput(read.input) };
  } catch (error) {
    return { check: { invalid: `effect "${row.id}" of kind "${row.kind}" not run: ${errorText(error)}` } };
  }
}

/** An operator's succeeded settlement through the handler's `parseResult`, if it has one. */
function checkSettlement(handler: AnyHandler | undefined, row: OutboxRow): ClaimedEvent["settlement"] {
  const pending = effectRowState(row).pending;
  if (pending?.via !== "operator" || pending.outcome !== "succeeded" || !handler?.parseResult) return undefined;
  const read = readResult(handler, pending.result);
  return "unreadable" in read ? { ok: false, reason: read.unreadable } : { ok: true, result: read.result };
}

/** A result (from run, lookup or an operator) through the handler's `parseResult`, or why it cannot be read. */
function readResult(handler: AnyHandler, raw: unknown): { result: unknown } | { unreadable: string } {
  if (!handler.parseResult) return { result: raw };
  try {
    return { result: handler.parseResult(raw) };
  } catch (error) {
    return { unreadable: `unreadable result of kind "${handler.kind}": ${errorText(error)}` };
  }
}

/** A definite answer with its result read; a succeeded one whose result cannot be read is no answer. */
function readDefinite(handler: AnyHandler, answer: DefiniteResult): { read: DefiniteResult } | { unreadable: string } {
  if (answer.outcome !== "succeeded") return { read: answer };
  const read = readResult(handler, answer.result);
  return "unreadable" in read ? read : { read: { outcome: "succeeded", result: read.result } };
}

/** What a transition counts beside its I/O. */
function count(ctx: StepContext, row: OutboxRow, next: Transition): void {
  if (next.note === "no-handler") ctx.noHandler(row.kind);
  if (next.note === "retried")
    ctx.counts.retried.onLabels(ctx.metrics.outcomes, { kind: row.kind, outcome: "retried" });
  // Its answer is counted already (outcome `not-performed`, in `run`); see `DispatcherCounts`.
  if (next.note === "retried-not-performed") ctx.counts.retriedNotPerformed++;
}

/** The transition's row write as the journal takes it: a backoff drawn, the state compacted. */
function outboxUpdate(ctx: StepContext, update: EffectUpdate, now: number): OutboxUpdate {
  const { notBefore, result, ...rest } = update;
  return {
    ...rest,
    ...(notBefore === undefined
      ? {}
      : {
          notBefore:
            typeof notBefore === "number" ? notBefore : now + backoffDelay(notBefore.backoff, notBefore.n, ctx.random),
        }),
    ...(result === undefined ? {} : { result: compactState(result) }),
  };
}

/** The row after a write the interpreter made (or, for a recorded attempt, the claimer made). */
function applied(row: OutboxRow, update: EffectUpdate): OutboxRow {
  const next = update.result === undefined ? row : rowWithState(row, update.result);
  return { ...next, attempts: update.attempts ?? row.attempts };
}

/** Tell the owner; its answer as the next event. Anything but a refusal of a non-final outcome is thrown. */
async function tell(ctx: StepContext, row: OutboxRow, told: OwnerCommand): Promise<EffectEvent> {
  const { command } = told;
  const final = command.type === "oncely.effect.succeeded" || command.type === "oncely.effect.failed";
  try {
    await ctx.runtime.send(row.stream, command, correlated(row));
  } catch (error) {
    rethrowCrash(error);
    if (error instanceof CommandRejectedError) {
      ctx.counts.deadEffects.onLabels(ctx.metrics.outcomes, { kind: row.kind, outcome: "dead" });
      ctx.logger.error({ key: row.id, owner: row.stream, err: error }, "the owner rejected an effect outcome");
      return { type: "owner-rejected", error: errorText(error) };
    }
    if (!final) throw error;
    // The answer is known; it stays on the row so no later pass asks the provider again.
    ctx.logger.warn({ key: row.id, owner: row.stream, err: error }, "recording an effect outcome failed; will retry");
    return { type: "owner-unreachable", error: errorText(error) };
  }
  if (command.type === "oncely.effect.succeeded" || command.type === "oncely.effect.failed") {
    if (command.type === "oncely.effect.succeeded") {
      ctx.counts.completed.onLabels(ctx.metrics.outcomes, { kind: row.kind, outcome: "succeeded" });
    } else ctx.counts.failed.onLabels(ctx.metrics.outcomes, { kind: row.kind, outcome: "failed" });
    const outcomeCommittedFault = ctx.faults.hit("dispatch.outcomeCommitted");
    if (outcomeCommittedFault) await outcomeCommittedFault;
  } else if (command.type === "oncely.effect.unknown") {
    ctx.counts.unknown.onLabels(ctx.metrics.outcomes, { kind: row.kind, outcome: "unknown" });
  } else if (command.type === "oncely.effect.needs-reconciliation") {
    const why = told.escalation;
    ctx.counts.reconcile.onLabels(ctx.metrics.outcomes, { kind: row.kind, outcome: "reconcile" });
    ctx.metrics.escalations.inc({ kind: row.kind, reason: why ?? "unknown" });
    ctx.logger.warn(
      {
        key: row.id,
        kind: row.kind,
        owner: row.stream,
        attempts: row.attempts,
        escalation: why,
        reason: command.error,
      },
      "effect needs reconciliation",
    );
  }
  return { type: "owner-accepted", command: told };
}

/**
 * Record the attempt (before the call: from then on a crash makes it ambiguous), call `run` with
 * the row's key, classify its answer. Undefined when the lease was lost before the call.
 */
async function run(
  ctx: StepContext,
  claimed: OutboxRow,
  policy: EffectPolicy,
  handler: AnyHandler,
  input: unknown,
  recorded: boolean,
): Promise<{ row: OutboxRow; event: EffectEvent } | undefined> {
  const beforeHandlerFault = ctx.faults.hit("dispatch.beforeHandler");
  if (beforeHandlerFault) await beforeHandlerFault;
  const start = effectTransition(claimed, policy, { type: "run-starting", recorded }, ctx.clock.now());
  const record = start.update ?? {};
  if (!recorded && !(await writeRow(ctx, claimed, outboxUpdate(ctx, record, ctx.clock.now())))) return undefined;
  const row = applied(claimed, record);
  ctx.counts.runs.onLabels(ctx.metrics.attempts, { kind: row.kind });
  const answer = await runAnswer(ctx, row, policy, handler, input);
  const afterProviderFault = ctx.faults.hit("dispatch.afterProvider");
  if (afterProviderFault) await afterProviderFault;
  if (answer.kind !== "not-performed") {
    return { row, event: { type: "run-answered", answer, canLookUp: handler.lookup !== undefined } };
  }
  ctx.metrics.outcomes.inc({ kind: row.kind, outcome: "not-performed" });
  // One draw, as the retry's backoff decides whether the budget's age is spent.
  const jitter = ctx.random.next();
  return { row, event: { type: "run-answered", answer, canLookUp: handler.lookup !== undefined, jitter } };
}

async function runAnswer(
  ctx: StepContext,
  row: OutboxRow,
  policy: EffectPolicy,
  handler: AnyHandler,
  input: unknown,
): Promise<RunAnswer> {
  const attempt = row.attempts;
  let raw: unknown;
  try {
    raw = await handlerCall(ctx, "run", row, attempt, () =>
      withTimeout(ctx.clock, policy.timeoutMs, ctx.signal, (call) =>
        handler.run(input, {
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
  } catch (error) {
    const skipped = thrownNotPerformed(error);
    if (skipped) return { kind: "not-performed", answer: skipped };
    const refused = thrownTerminal(error);
    return refused ? { kind: "definite", answer: refused } : { kind: "ambiguous", reason: errorText(error) };
  }
  const skipped = notPerformedAnswer(raw);
  if (skipped) return { kind: "not-performed", answer: skipped };
  const definite = definiteAnswer(raw);
  if (!definite) {
    return {
      kind: "ambiguous",
      reason: `handler for "${row.kind}" returned no succeeded/failed/not-performed outcome`,
    };
  }
  // A 2xx whose body we cannot read: the provider may have acted, so it is ambiguous.
  const read = readDefinite(handler, definite);
  return "unreadable" in read
    ? { kind: "ambiguous", reason: read.unreadable }
    : { kind: "definite", answer: read.read };
}

/** An Unknown effect: ask the provider by key. Never calls `run`: only a lookup's answer can make that safe. */
async function lookUp(
  ctx: StepContext,
  row: OutboxRow,
  policy: EffectPolicy,
  handler: AnyHandler,
  input: unknown,
): Promise<{ row: OutboxRow; event: EffectEvent }> {
  const lookup = handler.lookup;
  if (!lookup) throw new Error(`effect "${row.id}": a lookup was asked for a kind without one ("${row.kind}")`);
  let found: LookupResult | undefined;
  let problem: string;
  try {
    found = await handlerCall(ctx, "lookup", row, row.attempts, () =>
      withTimeout(ctx.clock, policy.timeoutMs, ctx.signal, (call) =>
        lookup.call(handler, row.id, {
          get signal() {
            return call.signal;
          },
          input,
        }),
      ),
    );
    problem = `lookup of "${row.id}" answered ${JSON.stringify(found?.outcome ?? null)}`;
  } catch (error) {
    problem = `lookup failed: ${errorText(error)}`;
  }
  ctx.counts.lookups.onLabels(ctx.metrics.lookups, { kind: row.kind, answer: lookupAnswerLabel(found) });
  const definite = definiteAnswer(found);
  const read = definite && readDefinite(handler, definite);
  const answer: LookupAnswer =
    read && "read" in read
      ? { kind: "definite", answer: read.read }
      : found?.outcome === "not-found"
        ? { kind: "not-found" }
        : { kind: "unclear", problem: read && "unreadable" in read ? read.unreadable : problem };
  return { row, event: { type: "lookup-answered", answer } };
}
