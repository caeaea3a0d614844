import { describe, expect, it } from "vitest";
import { sequentialIds } from "../../src/core/clock.js";
import { createRuntime } from "../../src/core/runtime.js";
import { type Ownership, sliceOfAddress } from "../../src/core/slices.js";
import { MemoryJournal } from "../../src/journal/memory.js";
import type { Envelope } from "../../src/messaging/envelope.js";
import { messagingMetrics } from "../../src/messaging/metrics.js";
import { Relay } from "../../src/messaging/relay.js";
import { SimulatedClock } from "../../src/testing/clock.js";
import { producer } from "../messaging/support/orders.js";

const SLICES = 4;

/** Owns the slices in `owned`; `move` changes them and tells the listeners, as a lease manager does. */
function movableOwnership(owned: Set<number>): Ownership & { move(to: number[]): void } {
  const listeners = new Set<() => void>();
  return {
    sliceCount: SLICES,
    owns: (slice) => owned.has(slice),
    fence: () => undefined,
    onChange: (listener) => {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    move(to) {
      owned.clear();
      for (const slice of to) owned.add(slice);
      for (const listener of listeners) listener();
    },
  };
}

describe("a relay with an ownership", () => {
  it("publishes only the events of the slices it owns, and the others' once it owns them", async () => {
    const journal = new MemoryJournal({ sliceCount: SLICES });
    const clock = new SimulatedClock();
    const runtime = createRuntime({ journal, actors: [producer], clock, ids: sequentialIds("ev") });
    const published: string[] = [];
    const transport = {
      name: "recording",
      publish: async (envelope: Envelope) => {
        published.push(envelope.aggregateId);
      },
      subscribe: async () => {
        throw new Error("not used");
      },
      close: async () => {},
    };
    const streams = ["a", "b", "c", "d", "e", "f", "g", "h"].map((id) => `producer/${id}`);
    const owned = sliceOfAddress(streams[0] as string, SLICES);
    const ownership = movableOwnership(new Set([owned]));
    const relay = new Relay({ journal, transport, clock, ownership, metrics: messagingMetrics() });
    for (const stream of streams) await runtime.send(stream, { type: "Record", event: "OrderPlaced" });
    await relay.drain();
    const mine = streams.filter((s) => sliceOfAddress(s, SLICES) === owned).map((s) => s.slice("producer/".length));
    expect(published.sort()).toEqual(mine.sort());
    expect(mine.length).toBeLessThan(streams.length);
    ownership.move([0, 1, 2, 3]);
    await relay.drain();
    expect(published.sort()).toEqual(streams.map((s) => s.slice("producer/".length)).sort());
  });
});
