import type { Context } from "@opentelemetry/api";
import type { ActorMetrics } from "./runtime-metrics.js";
import { ATTR, attributes, inSpan, SpanKind, type TraceCarrier, traceCarrier } from "./tracing.js";

/** A command's handling in its actor's mailbox, as a span under the sender's context. */
export function commandSpan<T>(
  address: string,
  type: string,
  ids: { messageId?: string | undefined; correlationId?: string | undefined },
  parent: Context,
  work: () => Promise<T>,
): Promise<T> {
  return inSpan(
    "oncely.command",
    {
      kind: SpanKind.SERVER,
      parent,
      attributes: () =>
        attributes({
          [ATTR.address]: address,
          [ATTR.command]: type,
          [ATTR.messageId]: ids.messageId,
          [ATTR.correlationId]: ids.correlationId,
        }),
    },
    work,
  );
}

/**
 * A journal commit of `actor`, as a span and in `oncely_commit_duration_seconds`. Timed with the
 * monotonic clock: a measurement no decision reads (the injected clock has ms granularity).
 */
export async function timedCommit<T>(metrics: ActorMetrics, work: () => Promise<T>): Promise<T> {
  const started = performance.now();
  try {
    return await inSpan("oncely.commit", {}, work);
  } finally {
    metrics.commitSeconds.observe((performance.now() - started) / 1000);
  }
}

/** `{ trace }` for an outbox row's payload when the active context has a trace to carry, else `{}`. */
export function traceField(carrier: TraceCarrier | undefined): { trace?: TraceCarrier } {
  return carrier ? { trace: carrier } : {};
}

export { traceCarrier };
