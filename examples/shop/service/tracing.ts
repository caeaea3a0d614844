import type { Logger } from "oncely";

/**
 * Traces to an OTLP collector, opt-in by environment: with `OTEL_EXPORTER_OTLP_ENDPOINT` set the
 * shop registers the OpenTelemetry Node SDK (async-hooks context manager, W3C propagator) with a
 * batching OTLP/HTTP exporter, which reads its endpoint, headers and `OTEL_SERVICE_NAME` from the
 * environment itself. Those packages are dev dependencies: a shop installed without them still
 * runs, with a warning, and traces nothing. Returns a shutdown that flushes what is buffered.
 */
export async function startTracing(env: NodeJS.ProcessEnv, logger: Logger): Promise<() => Promise<void>> {
  const endpoint = env.OTEL_EXPORTER_OTLP_ENDPOINT;
  if (!endpoint) return async () => {};
  try {
    const [{ NodeTracerProvider }, { BatchSpanProcessor }, { OTLPTraceExporter }] = await Promise.all([
      import("@opentelemetry/sdk-trace-node"),
      import("@opentelemetry/sdk-trace-base"),
      import("@opentelemetry/exporter-trace-otlp-http"),
    ]);
    const provider = new NodeTracerProvider({ spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter())] });
    provider.register();
    logger.info({ endpoint }, "tracing to OTLP");
    return () => provider.shutdown();
  } catch (error) {
    logger.warn(
      { err: error },
      "OTEL_EXPORTER_OTLP_ENDPOINT is set but the OpenTelemetry SDK is not installed; no traces",
    );
    return async () => {};
  }
}
