import type { OutboxRow } from "../journal/types.js";
import type { Envelope } from "../messaging/envelope.js";
import type { HandleResult } from "../messaging/handlers.js";
import type { MessagingMetrics } from "../messaging/metrics.js";
import { ATTR, attributes, contextFrom, inSpan, SpanKind } from "./tracing.js";

/** The relay publishing one outbox event row, under the trace of the command that published it. */
export function publishSpan<T>(row: OutboxRow, work: () => Promise<T>): Promise<T> {
  const envelope = row.payload as Partial<Envelope> | null;
  return inSpan(
    "oncely.publish",
    {
      kind: SpanKind.PRODUCER,
      parent: contextFrom(envelope),
      attributes: () =>
        attributes({
          [ATTR.eventId]: row.id,
          [ATTR.eventType]: row.kind,
          [ATTR.address]: row.stream,
          [ATTR.correlationId]: typeof envelope?.correlationId === "string" ? envelope.correlationId : undefined,
        }),
    },
    work,
  );
}

/**
 * A consumer handling one integration event, under the trace the envelope carries (the producing
 * command's), in whichever process consumes it. The outcome (applied, duplicate, parked, ignored)
 * is set on the span; applied events feed `oncely_consumer_lag_seconds` (from the producer's
 * `occurredAt`: across machines it includes their clock skew).
 */
export function consumeSpan(
  consumer: string,
  envelope: Envelope,
  metrics: MessagingMetrics,
  now: () => number,
  work: () => Promise<HandleResult>,
): Promise<HandleResult> {
  return inSpan(
    "oncely.consume",
    {
      kind: SpanKind.CONSUMER,
      parent: contextFrom(envelope),
      attributes: {
        [ATTR.consumer]: consumer,
        [ATTR.eventId]: envelope.eventId,
        [ATTR.eventType]: envelope.type,
        [ATTR.correlationId]: envelope.correlationId,
      },
    },
    async (span) => {
      const result = await work();
      span.setAttribute(ATTR.outcome, result.outcome);
      if (result.outcome === "applied") {
        const occurredAt = Date.parse(envelope.occurredAt);
        if (Number.isFinite(occurredAt)) {
          metrics.consumerLag.observe({ consumer }, Math.max(0, now() - occurredAt) / 1000);
        }
      }
      return result;
    },
  );
}
