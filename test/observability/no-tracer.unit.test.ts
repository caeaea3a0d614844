import { context, propagation, ROOT_CONTEXT, trace } from "@opentelemetry/api";
import { InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { NodeTracerProvider } from "@opentelemetry/sdk-trace-node";
import { afterEach, describe, expect, it } from "vitest";
import { inSpan } from "../../src/observability/tracing.js";

/**
 * With no tracer provider registered, inSpan skips the tracer and never builds the attributes;
 * a provider registered later (or a parent span in the context) is honoured at once.
 */
describe("inSpan when nobody traces", () => {
  afterEach(() => {
    trace.disable();
    context.disable();
    propagation.disable();
  });

  it("runs the work with a span that records nothing, without building the attributes", async () => {
    let built = 0;
    const result = await inSpan(
      "oncely.test",
      {
        attributes: () => {
          built++;
          return { a: 1 };
        },
      },
      async (span) => {
        expect(span.isRecording()).toBe(false);
        expect(trace.isSpanContextValid(span.spanContext())).toBe(false);
        return 7;
      },
    );
    expect(result).toBe(7);
    expect(built).toBe(0);
  });

  it("records the span, attributes included, once a provider is registered", async () => {
    const exporter = new InMemorySpanExporter();
    const provider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
    provider.register();
    await inSpan("oncely.test", { attributes: () => ({ a: 1 }) }, async (span) => {
      expect(span.isRecording()).toBe(true);
    });
    expect(exporter.getFinishedSpans().map((s) => [s.name, s.attributes])).toEqual([["oncely.test", { a: 1 }]]);
    await provider.shutdown();
  });

  it("carries a parent span's context with no provider registered (a remote parent)", async () => {
    const remote = trace.wrapSpanContext({ traceId: "1".repeat(32), spanId: "2".repeat(16), traceFlags: 1 });
    const parent = trace.setSpan(ROOT_CONTEXT, remote);
    await inSpan("oncely.test", { parent }, async (span) => {
      expect(span.spanContext().traceId).toBe("1".repeat(32));
    });
  });
});
