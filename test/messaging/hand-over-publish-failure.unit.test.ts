import { describe, expect, it } from "vitest";
import { sequentialIds } from "../../src/core/clock.js";
import { createRuntime } from "../../src/core/runtime.js";
import { MemoryJournal } from "../../src/journal/memory.js";
import type { Envelope } from "../../src/messaging/envelope.js";
import { messagingMetrics } from "../../src/messaging/metrics.js";
import { Relay } from "../../src/messaging/relay.js";
import type { Transport } from "../../src/messaging/transport.js";
import { SimulatedClock } from "../../src/testing/clock.js";
import { producer } from "./support/orders.js";

/** A transport that records what it stores, and refuses while `down`. */
function recordingTransport() {
  const stored: Envelope[] = [];
  const state = { down: false };
  const transport: Transport = {
    name: "recording",
    async publish(envelope) {
      if (state.down) throw new Error("broker unreachable");
      stored.push(envelope);
    },
    subscribe: () => Promise.reject(new Error("not for this test")),
    close: async () => {},
  };
  return { transport, stored, state };
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 20));

describe("events handed over at commit when a publish fails", () => {
  it("leave the stream to the claim path, which publishes it in order; then its events are handed over again", async () => {
    const journal = new MemoryJournal();
    const clock = new SimulatedClock();
    const runtime = createRuntime({ journal, actors: [producer], clock, ids: sequentialIds("e") });
    const { transport, stored, state } = recordingTransport();
    const relay = new Relay({
      journal,
      transport,
      clock,
      leaseMs: 5000,
      retryBaseMs: 100,
      metrics: messagingMetrics(),
    });
    relay.handOverTo(runtime);
    relay.start();
    try {
      state.down = true;
      await runtime.send("producer/s", { type: "Record", event: "E1" });
      await settle();
      state.down = false;
      // E1 waits for its backoff on the claim path: E2 and E3 must not overtake it.
      await runtime.send("producer/s", { type: "Record", event: "E2" });
      await runtime.send("producer/s", { type: "Record", event: "E3" });
      await settle();
      expect(stored).toEqual([]);
      expect(relay.handOverStats.released).toBe(3);
      clock.advance(100);
      await relay.drain();
      expect(stored.map((e) => e.aggregateVersion)).toEqual([1, 2, 3]);
      // Every released row settled: the stream is handed over again, with no claim.
      await runtime.send("producer/s", { type: "Record", event: "E4" });
      await settle();
      expect(stored.map((e) => e.aggregateVersion)).toEqual([1, 2, 3, 4]);
      expect(relay.handOverStats).toMatchObject({ handedOver: 4, released: 3 });
      expect(await journal.listOutbox({ category: "event", status: "pending" })).toEqual([]);
    } finally {
      await relay.stop();
      runtime.close();
    }
  });
});
