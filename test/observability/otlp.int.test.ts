import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { context, propagation, trace } from "@opentelemetry/api";
import { afterAll, describe, expect, it } from "vitest";
import { startTracing } from "../../examples/shop/service/tracing.js";
import { silentLogger } from "../../src/core/logger.js";
import { twoContexts } from "./two-contexts.js";

// The shop's opt-in OTLP export, against a collector stand-in on loopback that records what it is sent.

const received: { path: string; bytes: number }[] = [];
const collector = createServer((request, response) => {
  let bytes = 0;
  request.on("data", (chunk: Buffer) => {
    bytes += chunk.length;
  });
  request.on("end", () => {
    received.push({ path: request.url ?? "", bytes });
    response.writeHead(200, { "content-type": "application/json" }).end("{}");
  });
});

afterAll(() => {
  trace.disable();
  context.disable();
  propagation.disable();
  collector.close();
});

describe("OTLP export in the shop", () => {
  it("does nothing without OTEL_EXPORTER_OTLP_ENDPOINT", async () => {
    const stop = await startTracing({}, silentLogger);
    await stop();
    expect(trace.getTracer("t").startSpan("x").isRecording()).toBe(false);
  });

  it("exports the library's spans over OTLP/HTTP when the endpoint is set, flushed at shutdown", async () => {
    await new Promise<void>((resolve) => collector.listen(0, "127.0.0.1", resolve));
    const endpoint = `http://127.0.0.1:${(collector.address() as AddressInfo).port}`;
    process.env.OTEL_EXPORTER_OTLP_ENDPOINT = endpoint;
    try {
      const stop = await startTracing({ OTEL_EXPORTER_OTLP_ENDPOINT: endpoint }, silentLogger);
      const world = twoContexts();
      await world.orders.send("order/o1", { type: "PlaceOrder", amount: 3 }, { correlationId: "c1" });
      while ((await world.dispatcher.runOnce()) > 0) {}
      await stop();
    } finally {
      delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
    }
    expect(received.filter((r) => r.path === "/v1/traces" && r.bytes > 0).length).toBeGreaterThan(0);
  });
});
