import { z } from "zod";
import {
  InvalidInputError,
  NotRegisteredError,
  RetryableError,
  RuntimeClosedError,
  TerminalError,
} from "../base/errors.js";
import { EffectNotFoundError } from "../effects/errors.js";
import type { Settlement } from "../effects/types.js";
import { skipGap, supplyGapEvent } from "../messaging/gap-tools.js";
import { type OperatorAction, recordAction } from "./audit.js";
import { ConsoleHttpError } from "./errors.js";
import type { ConsoleContext, ConsoleView } from "./options.js";
import { settleAndRecord } from "./settlements.js";
import { parseBody } from "./validation.js";

const operator = z.string().trim().min(1, "the operator's name is required").max(200);
const note = z.string().max(2_000).optional();

/** A settle form as posted: the result is JSON text typed by the operator. */
export const settleForm = z.strictObject({
  key: z.string().min(1, "the effect key is required"),
  outcome: z.enum(["succeeded", "failed"], { message: "must be succeeded or failed" }),
  result: z
    .string()
    .max(64 * 1024)
    .optional(),
  reason: z.string().max(2_000).optional(),
  by: operator,
  note,
});

export const operatorForm = z.strictObject({ by: operator, note });

function parseResult(text: string | undefined): unknown {
  if (text === undefined || text.trim() === "") {
    throw new InvalidInputError("invalid settlement", [
      "result: a succeeded effect needs the provider's result as JSON",
    ]);
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new InvalidInputError("invalid settlement", [`result: not valid JSON (${(error as Error).message})`]);
  }
}

/**
 * Settle an Unknown effect exactly as `oncely reconcile settle` does: through
 * `Reconciliation.settle`, which records the decision on the row for the owner to commit as an
 * event (`via: "operator"`, with `by`), recorded in `oncely.operator-actions`.
 */
export async function settle(ctx: ConsoleContext, body: unknown): Promise<{ message: string; action: OperatorAction }> {
  const form = parseBody(settleForm, body, "settlement");
  const optionalNote = form.note?.trim() ? { note: form.note.trim() } : {};
  let settlement: Settlement;
  if (form.outcome === "succeeded") {
    if (form.reason?.trim())
      throw new InvalidInputError("invalid settlement", ["reason: goes with failed, not succeeded"]);
    settlement = { outcome: "succeeded", result: parseResult(form.result), by: form.by, ...optionalNote };
  } else {
    if (form.result?.trim())
      throw new InvalidInputError("invalid settlement", ["result: goes with succeeded, not failed"]);
    if (!form.reason?.trim())
      throw new InvalidInputError("invalid settlement", ["reason: a failed settlement needs a reason"]);
    settlement = { outcome: "failed", reason: form.reason.trim(), by: form.by, ...optionalNote };
  }
  const row = await ctx.journal.getOutbox(form.key);
  if (row?.category !== "effect") throw new EffectNotFoundError(form.key);
  ctx.checkSettlement(row, settlement);
  const action = await settleAndRecord({ ...ctx, via: "console" }, form.key, settlement);
  return { message: `settled ${form.key} as ${settlement.outcome} by ${form.by}`, action };
}

/** A retry form as posted: the effect's key, who, and why. */
export const retryForm = z.strictObject({ key: z.string().min(1, "the effect key is required"), by: operator, note });

/**
 * Run again, with the same key, an effect whose retries were exhausted (`Reconciliation.retry`,
 * as `oncely reconcile retry` does); refused (409) for an effect whose outcome is Unknown.
 */
export async function retry(ctx: ConsoleContext, body: unknown): Promise<{ message: string; action: OperatorAction }> {
  const form = parseBody(retryForm, body, "retry");
  const note = form.note?.trim();
  await ctx.reconciliation.retry(form.key, { by: form.by, ...(note ? { note } : {}) });
  const action = await done(ctx, "retry", form.key, "retrying", form);
  return { message: `retrying ${form.key} by ${form.by} with a fresh retry budget`, action };
}

/** Record an action that took effect, with the operator's name and note as posted. */
const done = (
  ctx: ConsoleContext,
  action: "retry" | "replay" | "discard" | "skip-gap" | "supply-gap",
  target: string,
  outcome: string,
  form: { by: string; note?: string | undefined },
): Promise<OperatorAction> =>
  recordAction(ctx.journal, ctx.clock, ctx.ids, {
    by: form.by,
    action,
    target,
    outcome,
    note: form.note?.trim() || null,
    via: "console",
  });

/** 404 for a dead letter nobody stored (the operations themselves answer any bad id as invalid input). */
export async function requireDeadLetter(ctx: Pick<ConsoleView, "journal">, id: string): Promise<void> {
  if (!(await ctx.journal.getDeadLetter(id))) throw new ConsoleHttpError(404, `no dead letter "${id}"`);
}

/** Replay a dead letter through its consumer (`DeadLetters.replay`), recording who did it. */
export async function replay(
  ctx: ConsoleContext,
  id: string,
  body: unknown,
): Promise<{ message: string; action: OperatorAction }> {
  const form = parseBody(operatorForm, body, "replay");
  await requireDeadLetter(ctx, id);
  const result = await ctx.deadLetters.replay(id).catch((error: unknown) => {
    // The letter stays open; say why the consumer refused it again (its cause is not fixed yet).
    if (
      error instanceof InvalidInputError ||
      error instanceof NotRegisteredError ||
      error instanceof RuntimeClosedError
    )
      throw error;
    if (error instanceof RetryableError) throw new ConsoleHttpError(503, `replay failed, try again: ${error.message}`);
    if (error instanceof TerminalError) throw new ConsoleHttpError(409, `replay refused: ${error.message}`);
    throw error;
  });
  const outcome = result.released > 0 ? `${result.outcome}, released ${result.released}` : result.outcome;
  const action = await done(ctx, "replay", id, outcome, form);
  return { message: `replayed ${id}: ${outcome}`, action };
}

/** Discard a dead letter (`DeadLetters.discard`; it stays stored), recording who did it. */
export async function discard(
  ctx: ConsoleContext,
  id: string,
  body: unknown,
): Promise<{ message: string; action: OperatorAction }> {
  const form = parseBody(operatorForm, body, "discard");
  await requireDeadLetter(ctx, id);
  await ctx.deadLetters.discard(id);
  const action = await done(ctx, "discard", id, "discarded", form);
  return { message: `discarded ${id}`, action };
}

/** A skip form as posted: the consumer and source stream of the gap, who, and why. */
export const skipGapForm = z.strictObject({
  consumer: z.string().min(1, "the consumer is required"),
  source: z.string().min(1, "the source stream is required"),
  by: operator,
  note,
});

/** Journal errors a gap action can meet that are worth trying again (the consumer moved on meanwhile). */
function retryLater(error: unknown): never {
  if (error instanceof RetryableError) throw new ConsoleHttpError(503, `try again: ${error.message}`);
  throw error;
}

/**
 * Skip a gap as lost (`skipGap` of `messaging/gap-tools.ts`, as `oncely gaps skip` does): the
 * checkpoint moves past it, its alert is marked `skipped` naming the operator, and the running
 * consumer's next gap check releases what was parked. Refused (400) when there is no gap.
 */
export async function skipGapAction(
  ctx: ConsoleContext,
  body: unknown,
): Promise<{ message: string; action: OperatorAction }> {
  const form = parseBody(skipGapForm, body, "gap skip");
  const skipped = await skipGap(ctx.journal, {
    consumer: form.consumer,
    source: form.source,
    by: form.by,
    note: form.note,
    clock: ctx.clock,
  }).catch(retryLater);
  const outcome = `skipped ${skipped.from}..${skipped.to}`;
  const action = await done(ctx, "skip-gap", `${form.consumer}|${form.source}`, outcome, form);
  return {
    message: `${outcome} of ${form.source} for ${form.consumer} by ${form.by}; the consumer releases the parked versions at its next gap check`,
    action,
  };
}

/** A supply form as posted: the consumer, the missing event's envelope as JSON text, who, and why. */
export const supplyGapForm = z.strictObject({
  consumer: z.string().min(1, "the consumer is required"),
  envelope: z
    .string()
    .min(1, "the event's envelope (JSON) is required")
    .max(256 * 1024),
  by: operator,
  note,
});

/**
 * Supply a missing event of a gap (`supplyGapEvent`, as `oncely gaps supply` does): parked at its
 * version, applied by the running consumer's next gap check through the normal path. Refused
 * (400, naming what is wrong) when it is not an envelope or not a missing version.
 */
export async function supplyGapAction(
  ctx: ConsoleContext,
  body: unknown,
): Promise<{ message: string; action: OperatorAction }> {
  const form = parseBody(supplyGapForm, body, "gap supply");
  let envelope: unknown;
  try {
    envelope = JSON.parse(form.envelope);
  } catch (error) {
    throw new InvalidInputError("invalid gap supply", [`envelope: not valid JSON (${(error as Error).message})`]);
  }
  const supplied = await supplyGapEvent(ctx.journal, {
    consumer: form.consumer,
    envelope,
    by: form.by,
    note: form.note,
    clock: ctx.clock,
  }).catch(retryLater);
  const target = `${form.consumer}|${supplied.source}@${supplied.version}`;
  const action = await done(ctx, "supply-gap", target, `parked ${supplied.eventId}`, form);
  return {
    message:
      `supplied ${supplied.eventId} as version ${supplied.version} of ${supplied.source} for ${form.consumer} by ${form.by}; ` +
      "the consumer applies it at its next gap check once the versions before it are in",
    action,
  };
}
