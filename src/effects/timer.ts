import { CommandRejectedError, InvalidInputError } from "../base/errors.js";
import { parseAddress } from "../core/address.js";
import type { EffectRequest, TimerFired } from "../core/decider.js";
import type { OutboxRow } from "../journal/types.js";
import { backoffDelay } from "./backoff.js";
import { errorText, rethrowCrash, type StepContext, writeRow } from "./context.js";

/** The built-in effect kind of durable timers: run by every dispatcher, no handler to register. */
export const TIMER_KIND = "oncely.timer";

export interface DeadlineRequest {
  /** The timer's name: a metric label (`oncely_deadline_missed_total{deadline}`), so a small set. */
  name: string;
  /** Stable key, derived from business identity (`order:42:shipment-deadline`): asked twice, one timer. */
  key: string;
  /** When it is due (epoch ms, from `context.now` plus a duration). */
  at: number;
  /** Handed back in `oncely.timer.fired`. */
  payload?: unknown;
}

/**
 * A durable timer, as data returned by `decide` among its effects: at `at` (at the dispatcher's
 * next poll after it) the owner is sent `{ type: "oncely.timer.fired", key, name, payload, dueAt }`.
 * The owner's state decides what that means: when the awaited fact already came, it changes
 * nothing, so there is nothing to cancel and no race between the fact and the timer. The same
 * key requested again (a retried decision) is the same outbox row: one timer.
 *
 * @example
 * effects: [deadline({ name: "shipment", key: `order:${id}:shipment-deadline`, at: now + 3_600_000 })]
 */
export function deadline(request: DeadlineRequest): EffectRequest {
  if (!request.name) throw new InvalidInputError("deadline needs a name");
  if (!request.key) throw new InvalidInputError("deadline needs a key");
  if (!Number.isFinite(request.at)) throw new InvalidInputError(`deadline "${request.key}": at must be a time in ms`);
  return {
    kind: TIMER_KIND,
    key: request.key,
    input: { name: request.name, payload: request.payload ?? null },
    notBefore: request.at,
  };
}

/** The name and payload stored on a timer's row (`payload.input`, as the runtime writes effects). */
function timerInput(row: OutboxRow): { name: string; payload: unknown } {
  const input = (row.payload as { input?: { name?: unknown; payload?: unknown } } | null)?.input;
  return { name: typeof input?.name === "string" ? input.name : "unnamed", payload: input?.payload ?? null };
}

/**
 * A due timer row: tell its owner. The owner's commit of `oncely.timer.fired` marks the row done
 * (the runtime's routed-outcome rule, inbox id `{key}#outcome`), so a crash before that commit
 * fires it again and the owner's inbox answers a crash after it. An owner that refuses the command
 * refuses it again on every retry: the row goes dead with the error, visible, never retried forever.
 */
export async function timerStep(ctx: StepContext, row: OutboxRow): Promise<void> {
  const { name, payload } = timerInput(row);
  const command: TimerFired = { type: "oncely.timer.fired", key: row.id, name, payload, dueAt: row.notBefore };
  let result: Awaited<ReturnType<StepContext["runtime"]["send"]>>;
  try {
    result = await ctx.runtime.send(row.stream, command);
  } catch (error) {
    rethrowCrash(error);
    if (error instanceof CommandRejectedError) {
      ctx.counts.deadTimers.onLabels(ctx.metrics.timersDead, {
        actor_type: parseAddress(row.stream).type,
        deadline: name,
      });
      ctx.logger.error({ key: row.id, owner: row.stream, err: error }, "the owner rejected a fired timer");
      await writeRow(ctx, row, { status: "dead", lastError: `owner rejected the timer: ${errorText(error)}` });
      return;
    }
    const attempts = row.attempts + 1;
    ctx.logger.warn({ key: row.id, owner: row.stream, err: error }, "firing a timer failed; will retry");
    await writeRow(ctx, row, {
      attempts,
      notBefore: ctx.clock.now() + backoffDelay(ctx.policyFor(TIMER_KIND).backoff, attempts, ctx.random),
      lastError: `firing failed: ${errorText(error)}`,
    });
    return;
  }
  // The owner acted on it (recorded events) when the awaited fact had not come: a missed deadline.
  const missed = result.duplicate !== true && (result.events?.length ?? 0) > 0;
  ctx.timerFired(parseAddress(row.stream).type, name, missed);
  if (missed) ctx.logger.warn({ key: row.id, owner: row.stream, deadline: name }, "deadline missed");
}
