import {
  type Attributes,
  type Context,
  context,
  INVALID_SPAN_CONTEXT,
  ProxyTracerProvider,
  propagation,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  trace,
} from "@opentelemetry/api";

/**
 * Traces through the OpenTelemetry API only: the library never registers a tracer provider,
 * propagator or context manager; the application does (or does not). With none registered every
 * call below is the API's no-op: a span object that records nothing, no carrier written.
 *
 * Trace context crosses the journal and the transport as W3C fields (`traceparent`, `tracestate`)
 * written by the registered propagator: on effect and message outbox rows (`payload.trace`) and
 * on the integration-event envelope. A process without a propagator writes none, and a reader
 * without one ignores them.
 */
/**
 * The tracer is asked of the global provider on every span (only when someone traces): one taken
 * once at load would stay bound to a provider that \`trace.disable()\` later dropped.
 */
const tracer = () => trace.getTracer("oncely");

/** Longest trace field the envelope accepts (W3C's propagation limit for tracestate). */
export const MAX_TRACE_FIELD = 512;

/** W3C trace context fields, as the registered propagator writes them. */
export interface TraceCarrier {
  traceparent?: string;
  tracestate?: string;
}

/** Span attribute names oncely sets (its own namespace). */
export const ATTR = {
  address: "oncely.actor.address",
  command: "oncely.command.type",
  messageId: "oncely.message_id",
  correlationId: "oncely.correlation_id",
  effectKey: "oncely.effect.key",
  effectKind: "oncely.effect.kind",
  attempt: "oncely.effect.attempt",
  eventId: "oncely.event.id",
  eventType: "oncely.event.type",
  consumer: "oncely.consumer",
  outcome: "oncely.outcome",
} as const;

/**
 * The active trace context as W3C fields, or undefined when there is no valid span in it (no
 * tracer registered and no remote parent) or no propagator writes anything.
 */
export function traceCarrier(active: Context = context.active()): TraceCarrier | undefined {
  const span = trace.getSpan(active);
  if (!span || !trace.isSpanContextValid(span.spanContext())) return undefined;
  const carrier: Record<string, string> = {};
  propagation.inject(active, carrier);
  if (carrier.traceparent === undefined || carrier.traceparent.length > MAX_TRACE_FIELD) return undefined;
  // tracestate is optional context: one longer than the envelope accepts is dropped, never the event.
  return carrier.tracestate === undefined || carrier.tracestate.length > MAX_TRACE_FIELD
    ? { traceparent: carrier.traceparent }
    : { traceparent: carrier.traceparent, tracestate: carrier.tracestate };
}

/** The context a carrier names (read through the registered propagator); `fallback` when it names none. */
export function contextFrom(carrier: unknown, fallback: Context = context.active()): Context {
  if (typeof carrier !== "object" || carrier === null) return fallback;
  const { traceparent, tracestate } = carrier as { traceparent?: unknown; tracestate?: unknown };
  if (typeof traceparent !== "string") return fallback;
  const fields: Record<string, string> = { traceparent };
  if (typeof tracestate === "string") fields.tracestate = tracestate;
  const extracted = propagation.extract(ROOT_CONTEXT, fields);
  return trace.getSpan(extracted) ? extracted : fallback;
}

/** The carrier an outbox row's payload holds (`payload.trace`), if any. */
export const rowTrace = (payload: unknown): unknown =>
  typeof payload === "object" && payload !== null ? (payload as { trace?: unknown }).trace : undefined;

export interface SpanOptions {
  kind?: SpanKind;
  /** The span's attributes, or a function making them: called only when a span is started. */
  attributes?: Attributes | (() => Attributes);
  /** Parent context (default: the active one). */
  parent?: Context;
}

/** The API's own no-op provider, which a proxy with no delegate hands out (public API only). */
const NOOP_PROVIDER = new ProxyTracerProvider().getDelegate();
/** What the no-op tracer hands out for a span without a parent: records nothing, carries nothing. */
const NOOP_SPAN = trace.wrapSpanContext(INVALID_SPAN_CONTEXT);

/**
 * True when a span here would be the API's invalid no-op span: no tracer provider registered
 * (the global one is the API's proxy with no delegate) and no span in the parent context (a
 * remote parent read by a propagator would make the no-op span carry its context). Asked on every
 * call, so a provider registered (or disabled) later takes effect at once.
 */
function nobodyTraces(parent: Context): boolean {
  const provider = trace.getTracerProvider();
  return (
    provider instanceof ProxyTracerProvider &&
    provider.getDelegate() === NOOP_PROVIDER &&
    trace.getSpan(parent) === undefined
  );
}

/**
 * Run `work` in a new span made active (so spans and carriers made inside are its children), end
 * it when `work` settles, and mark it failed with the error when `work` throws.
 */
export function inSpan<T>(name: string, options: SpanOptions, work: (span: Span) => Promise<T>): Promise<T> {
  const parent = options.parent ?? context.active();
  // Nobody traces: skip the tracer, the attributes and the context switch (this is the cost of
  // tracing when nobody traces, on every command, commit and effect).
  if (nobodyTraces(parent)) return work(NOOP_SPAN);
  const given = options.attributes ?? {};
  const span = tracer().startSpan(
    name,
    { kind: options.kind ?? SpanKind.INTERNAL, attributes: typeof given === "function" ? given() : given },
    parent,
  );
  // No provider and no remote parent: the API's invalid no-op span, with nothing to carry. Skip the
  // context switch and the wrapper (this is the cost of tracing when nobody traces).
  if (!span.isRecording() && !trace.isSpanContextValid(span.spanContext())) return work(span);
  return context.with(trace.setSpan(parent, span), async () => {
    try {
      return await work(span);
    } catch (error) {
      if (span.isRecording()) {
        span.recordException(error instanceof Error ? error : String(error));
        span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
      }
      throw error;
    } finally {
      span.end();
    }
  });
}

/** Attributes without the undefined and null values (OTel refuses them). */
export function attributes(values: Record<string, string | number | boolean | null | undefined>): Attributes {
  const out: Attributes = {};
  for (const [name, value] of Object.entries(values)) if (value !== undefined && value !== null) out[name] = value;
  return out;
}

export { SpanKind };
