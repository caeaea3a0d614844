import { context, propagation, ROOT_CONTEXT, trace } from "@opentelemetry/api";
import { InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { NodeTracerProvider } from "@opentelemetry/sdk-trace-node";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { parseEnvelope } from "../../src/messaging/envelope.js";
import { chargeKey, twoContexts } from "./two-contexts.js";

const exporter = new InMemorySpanExporter();

/** One order through both contexts: placed, charged, published, consumed. */
async function runOrder(world: ReturnType<typeof twoContexts>, id: string) {
  const sub = await world.consumer.subscribe(world.transport, { subjects: ["shop.>"] });
  const tracer = trace.getTracer("test");
  await tracer.startActiveSpan("POST /orders", async (span) => {
    await world.orders.send(
      `order/${id}`,
      { type: "PlaceOrder", amount: 42 },
      { messageId: "m1", correlationId: `corr-${id}` },
    );
    span.end();
  });
  // Run outside the request's context, as a dispatcher and a relay do: the rows carry the trace.
  await context.with(ROOT_CONTEXT, async () => {
    while ((await world.dispatcher.runOnce()) > 0) {}
    await world.relay.drain();
    await world.transport.idle();
  });
  await sub.stop();
}

describe("traces of one order across two contexts", () => {
  let provider: NodeTracerProvider;
  beforeAll(() => {
    provider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
    provider.register(); // the async-hooks context manager and the W3C propagator, globally
  });
  afterAll(async () => {
    await provider.shutdown();
    trace.disable();
    context.disable();
    propagation.disable();
  });
  beforeEach(() => exporter.reset());

  it("links request, command, effect attempt, outcome, publish, consumption and the other context's command in one trace", async () => {
    const world = twoContexts();
    await runOrder(world, "o1");
    expect((await world.shipments.state("shipment/o1")).state).toEqual({ requested: true });

    const spans = exporter.getFinishedSpans();
    const traceIds = new Set(spans.map((s) => s.spanContext().traceId));
    expect(traceIds.size).toBe(1);
    const byId = new Map(spans.map((s) => [s.spanContext().spanId, s]));
    const parentOf = (s: ReadableSpan) => byId.get(s.parentSpanContext?.spanId ?? "");
    const find = (name: string, attrs: Record<string, unknown> = {}) => {
      const found = spans.filter(
        (s) => s.name === name && Object.entries(attrs).every(([k, v]) => s.attributes[k] === v),
      );
      expect(found, `${name} ${JSON.stringify(attrs)}`).toHaveLength(1);
      return found[0] as ReadableSpan;
    };
    const request = find("POST /orders");
    const place = find("oncely.command", { "oncely.command.type": "PlaceOrder" });
    const effect = find("oncely.effect", { "oncely.effect.key": chargeKey("o1") });
    const run = find("oncely.effect.run");
    const outcome = find("oncely.command", { "oncely.command.type": "oncely.effect.succeeded" });
    const publish = find("oncely.publish");
    const consume = find("oncely.consume");
    const ship = find("oncely.command", { "oncely.command.type": "Ship" });

    expect(parentOf(place)).toBe(request);
    expect(parentOf(effect)).toBe(place);
    expect(parentOf(run)).toBe(effect);
    expect(parentOf(outcome)).toBe(effect);
    expect(parentOf(publish)).toBe(outcome);
    expect(parentOf(consume)).toBe(outcome);
    expect(parentOf(ship)).toBe(consume);
    // Each command's commit is its child.
    for (const command of [place, outcome, ship]) {
      expect(spans.filter((s) => s.name === "oncely.commit" && parentOf(s) === command)).toHaveLength(1);
    }
    expect(run.attributes).toMatchObject({
      "oncely.effect.key": chargeKey("o1"),
      "oncely.effect.kind": "charge",
      "oncely.effect.attempt": 1,
    });
    // The correlation id travels with the effect row, the outcome, the envelope and the consumed command.
    for (const span of [place, effect, outcome, publish, consume, ship]) {
      expect(span.attributes["oncely.correlation_id"], span.name).toBe("corr-o1");
    }
    expect(consume.attributes).toMatchObject({ "oncely.consumer": "shipping", "oncely.outcome": "applied" });
  });

  it("stores the trace context on the effect row and in the envelope kept on the event row (a republish sends that same one)", async () => {
    const world = twoContexts();
    await runOrder(world, "o2");
    const effectRow = await world.ordering.getOutbox(chargeKey("o2"));
    const traceparent = (effectRow?.payload as { trace?: { traceparent?: string } } | undefined)?.trace?.traceparent;
    expect(traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
    const eventRow = await world.ordering.getOutbox("o2:OrderPaid");
    const envelope = parseEnvelope(eventRow?.payload);
    expect(envelope.traceparent?.slice(3, 35)).toBe(traceparent?.slice(3, 35));
  });
});

describe("without a tracer provider", () => {
  it("writes no trace context anywhere and the order still goes through", async () => {
    const world = twoContexts();
    await world.orders.send("order/o3", { type: "PlaceOrder", amount: 1 }, { correlationId: "c3" });
    while ((await world.dispatcher.runOnce()) > 0) {}
    const sub = await world.consumer.subscribe(world.transport, { subjects: ["shop.>"] });
    await world.relay.drain();
    await world.transport.idle();
    await sub.stop();
    expect((await world.shipments.state("shipment/o3")).state).toEqual({ requested: true });
    expect((await world.ordering.getOutbox(chargeKey("o3")))?.payload).not.toHaveProperty("trace");
    expect((await world.ordering.getOutbox("o3:OrderPaid"))?.payload).not.toHaveProperty("traceparent");
  });

  it("validates an envelope without trace fields, and refuses a malformed traceparent field by name", () => {
    const base = {
      eventId: "e1",
      type: "T",
      source: "s",
      aggregateId: "a",
      occurredAt: "2026-01-01T00:00:00.000Z",
      correlationId: "c",
      causationId: "e1",
      payload: {},
    };
    expect(parseEnvelope(base).traceparent).toBeUndefined();
    expect(() => parseEnvelope({ ...base, traceparent: 7 })).toThrow(/traceparent/);
  });
});
