import type { Clock } from "../core/clock.js";
import type { EffectMetrics } from "../effects/metrics.js";
import type { OutboxRow } from "../journal/types.js";
import { ATTR, attributes, contextFrom, inSpan, rowTrace, SpanKind } from "./tracing.js";

const correlationOf = (row: OutboxRow): string | undefined => {
  const id = (row.payload as { correlationId?: unknown } | null)?.correlationId;
  return typeof id === "string" ? id : undefined;
};

/**
 * One dispatcher step of an outbox row (an effect, or an actor-to-actor message), as a span whose
 * parent is the trace of the command that requested it (`payload.trace`), in whatever process
 * runs it. What the step sends to actors (outcomes, the message itself) is traced inside it.
 */
export function outboxStepSpan<T>(row: OutboxRow, work: () => Promise<T>): Promise<T> {
  const effect = row.category === "effect";
  return inSpan(
    effect ? "oncely.effect" : "oncely.deliver",
    {
      kind: SpanKind.CONSUMER,
      parent: contextFrom(rowTrace(row.payload)),
      attributes: () =>
        attributes({
          [effect ? ATTR.effectKey : ATTR.messageId]: row.id,
          [effect ? ATTR.effectKind : ATTR.command]: effect
            ? row.kind
            : ((row.payload as { command?: { type?: string } } | null)?.command?.type ?? row.kind),
          [ATTR.address]: row.stream,
          [ATTR.correlationId]: correlationOf(row),
          [ATTR.attempt]: row.attempts,
        }),
    },
    work,
  );
}

/**
 * A handler's `run` or `lookup` call: a client span carrying the effect key, its time in the
 * `oncely_effect_handler_duration_seconds` histogram (on the injected clock, as timeouts are). A
 * run is counted in `oncely_effect_attempts_total` by its caller, with the dispatcher's `runs`.
 */
export async function handlerCall<T>(
  ctx: { metrics: EffectMetrics; clock: Clock },
  call: "run" | "lookup",
  row: OutboxRow,
  attempt: number,
  work: () => Promise<T>,
): Promise<T> {
  const started = ctx.clock.now();
  try {
    return await inSpan(
      `oncely.effect.${call}`,
      {
        kind: SpanKind.CLIENT,
        attributes: () => ({ [ATTR.effectKey]: row.id, [ATTR.effectKind]: row.kind, [ATTR.attempt]: attempt }),
      },
      work,
    );
  } finally {
    ctx.metrics.handlerSeconds.observe({ kind: row.kind, call }, Math.max(0, ctx.clock.now() - started) / 1000);
  }
}
