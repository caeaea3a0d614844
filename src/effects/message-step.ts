import { CommandRejectedError, InvalidInputError, NotOwnerError } from "../base/errors.js";
import type { EffectOutcome, Typed } from "../core/decider.js";
import { VersionTooNewError } from "../core/upcast.js";
import type { OutboxRow } from "../journal/types.js";
import { backoffDelay } from "./backoff.js";
import { correlated, errorText, rethrowCrash, type StepContext, writeRow } from "./context.js";
import { compactState, type MessageRowState, messageRowState } from "./row-state.js";

type Ack = NonNullable<MessageRowState["ack"]>;

/**
 * Actor-to-actor delivery, at least once: send the command to the receiver with the row id as
 * message id (the receiver's inbox dedups it in the same commit as its events, and its reply
 * exists only after that commit), then record the ack in the sender, whose commit marks the row done.
 *
 * Failure window: a crash between the receiver's commit and the sender's ack
 * (`delivery.inboxRecorded`) makes the next dispatcher deliver again; the receiver answers from
 * its inbox with the stored reply and changes nothing.
 */
export async function messageStep(ctx: StepContext, row: OutboxRow): Promise<void> {
  const state = messageRowState(row);
  const payload = parsePayload(row.payload);
  if (state.ack) return payload?.forward ? finishForward(ctx, row, state.ack) : recordAck(ctx, row, state.ack);
  if (!payload) {
    // Retrying cannot repair a malformed row: tell the sender it was rejected.
    return recordAck(ctx, row, { outcome: "rejected", error: "outbox message payload lacks {to, command.type}" });
  }
  const attempt = row.attempts + 1;
  if (!(await writeRow(ctx, row, { attempts: attempt, releaseLease: false }))) return;
  let ack: Ack;
  // Whether the receiver's inbox answered the message as one it had handled: a forwarder reports it.
  let duplicate = false;
  try {
    const messageId = payload.forward?.messageId ?? row.id;
    const delivered = await ctx.runtime.send(payload.to, payload.command, {
      ...correlated(row, { messageId, deliveringRow: row.id }),
      ...(payload.expectNew ? { expectNew: true } : {}),
    });
    ack = { outcome: "delivered", reply: delivered.reply ?? null };
    duplicate = delivered.duplicate === true;
  } catch (error) {
    rethrowCrash(error);
    if (error instanceof CommandRejectedError || error instanceof InvalidInputError) {
      ack = { outcome: "rejected", error: errorText(error) };
    } else if (error instanceof NotOwnerError && payload.forward) {
      // The forward's slice moved away between the claim and the send: not this attempt's fault and
      // not the message's. Released at once, it is claimed by the slice's new owner.
      ctx.logger.debug({ row: row.id, to: payload.to }, "a forward's slice moved away: released to its new owner");
      await writeRow(ctx, row, {
        status: "pending",
        attempts: row.attempts,
        notBefore: ctx.clock.now(),
        lastError: errorText(error),
      });
      return;
    } else if (error instanceof VersionTooNewError) {
      // The receiver's stream was written by newer code than ours: the message is fine and this was
      // not its attempt, so it never goes dead for it; a dispatcher running the newer code delivers it.
      await writeRow(ctx, row, {
        status: "pending",
        attempts: row.attempts,
        notBefore: ctx.clock.now() + backoffDelay(ctx.messageRetry.backoff, Math.max(1, row.attempts), ctx.random),
        lastError: errorText(error),
      });
      return;
    } else {
      return retryOrBury(ctx, { ...row, attempts: attempt }, error);
    }
  }
  const fault = ack.outcome === "delivered" ? ctx.faults.hit("delivery.inboxRecorded") : undefined;
  if (fault) await fault;
  if (payload.forward) return finishForward(ctx, { ...row, attempts: attempt }, ack, duplicate);
  await recordAck(ctx, { ...row, attempts: attempt }, ack);
}

/**
 * A forwarded command (`CommandRouter`) has no sending actor to acknowledge: its row is finished
 * with the receiver's reply (or refusal), which the forwarder reads.
 */
async function finishForward(ctx: StepContext, row: OutboxRow, ack: Ack, duplicate = false): Promise<void> {
  // `duplicate`: the owner's inbox had handled this message id before (a retry of a request that
  // reached another worker first), which the forwarder answers as a repeat, as a local send would.
  const result =
    ack.outcome === "delivered"
      ? { reply: ack.reply, ...(duplicate ? { duplicate: true } : {}) }
      : { error: ack.error };
  if (!(await writeRow(ctx, row, { status: "done", outcome: ack.outcome, result }))) return;
  (ack.outcome === "delivered" ? ctx.counts.delivered : ctx.counts.rejected).onLabels(ctx.metrics.messages, {
    actor: row.kind,
    outcome: ack.outcome,
  });
}

function parsePayload(
  payload: unknown,
): { to: string; command: Typed; forward: { messageId: string } | undefined; expectNew: boolean } | undefined {
  if (typeof payload !== "object" || payload === null) return undefined;
  const p = payload as { to?: unknown; command?: unknown; forward?: unknown; expectNew?: unknown };
  if (typeof p.to !== "string" || typeof p.command !== "object" || p.command === null) return undefined;
  if (typeof (p.command as { type?: unknown }).type !== "string") return undefined;
  const forward = p.forward as { messageId?: unknown } | undefined;
  return {
    to: p.to,
    command: p.command as Typed,
    forward: typeof forward?.messageId === "string" ? { messageId: forward.messageId } : undefined,
    expectNew: p.expectNew === true,
  };
}

async function retryOrBury(ctx: StepContext, row: OutboxRow, error: unknown): Promise<void> {
  const policy = ctx.messageRetry;
  if (row.attempts >= policy.maxAttempts) {
    ctx.counts.deadMessages.onLabels(ctx.metrics.messages, { actor: row.kind, outcome: "dead" });
    ctx.logger.error({ id: row.id, to: (row.payload as { to?: string }).to, err: error }, "message delivery gave up");
    await writeRow(ctx, row, { status: "dead", lastError: errorText(error) });
    return;
  }
  await writeRow(ctx, row, {
    status: "pending",
    notBefore: ctx.clock.now() + backoffDelay(policy.backoff, row.attempts, ctx.random),
    lastError: errorText(error),
  });
}

async function recordAck(ctx: StepContext, row: OutboxRow, ack: Ack): Promise<void> {
  const to = (row.payload as { to?: unknown } | null)?.to;
  const command: EffectOutcome =
    ack.outcome === "delivered"
      ? { type: "oncely.message.delivered", id: row.id, to: String(to), reply: ack.reply }
      : { type: "oncely.message.rejected", id: row.id, to: String(to), error: ack.error };
  try {
    await ctx.runtime.send(row.stream, command);
  } catch (error) {
    rethrowCrash(error);
    // The receiver has it already; keep the ack on the row so we only retry the sender's side.
    await writeRow(ctx, row, {
      status: "pending",
      notBefore: ctx.clock.now() + backoffDelay(ctx.messageRetry.backoff, Math.max(1, row.attempts), ctx.random),
      lastError: `recording the ack failed: ${errorText(error)}`,
      result: compactState({ ack }),
    });
    return;
  }
  (ack.outcome === "delivered" ? ctx.counts.delivered : ctx.counts.rejected).onLabels(ctx.metrics.messages, {
    actor: row.kind,
    outcome: ack.outcome,
  });
}
