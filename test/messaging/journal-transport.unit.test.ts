import { describe, expect, it } from "vitest";
import { seededRandom, sequentialIds } from "../../src/core/clock.js";
import { createRuntime } from "../../src/core/runtime.js";
import { MemoryJournal } from "../../src/journal/memory.js";
import { Consumer } from "../../src/messaging/consumer.js";
import { messagingMetrics } from "../../src/messaging/metrics.js";
import { Relay } from "../../src/messaging/relay.js";
import { JournalTransport } from "../../src/messaging/transports/journal.js";
import { journalTransportSuite } from "./support/journal-transport-suite.js";
import { LIFECYCLE, perEventCount, producer } from "./support/orders.js";

describe("journal transport: memory", () => {
  // The memory journal is one store per instance: "a new process" is a new transport on the same one.
  journalTransportSuite(async () => {
    const journal = new MemoryJournal();
    return { journal, reopen: async () => journal };
  });
});

describe("journal transport options", () => {
  it("refuses a poll interval or batch size that is not positive, naming the option", () => {
    const journal = new MemoryJournal();
    expect(() => new JournalTransport({ journal, pollMs: 0 })).toThrow(/journal transport pollMs must be a positive/);
    expect(() => new JournalTransport({ journal, batchSize: 1.5 })).toThrow(/journal transport batchSize/);
  });
});

describe("journal transport with a relay and a consumer, duplicates and delays injected", () => {
  it("every event reaches the consumer's projection exactly once in effect", async () => {
    const journal = new MemoryJournal();
    const runtime = createRuntime({ journal, actors: [producer], ids: sequentialIds("ev") });
    const transport = new JournalTransport({
      journal,
      pollMs: 20,
      random: seededRandom(7),
      faults: { duplicateRate: 0.3, maxDelayMs: 5, reorderWindow: 4 },
    });
    const relay = new Relay({ journal, transport, subjectPrefix: "shop", metrics: messagingMetrics(), pollMs: 20 });
    const consumer = new Consumer({ name: "count", journal, handler: perEventCount, metrics: messagingMetrics() });
    await consumer.subscribe(transport, { subjects: ["shop.>"] });
    relay.start();
    for (const event of LIFECYCLE) {
      for (let i = 1; i <= 10; i++) await runtime.send(`producer/p${i}`, { type: "Record", event });
    }
    await relay.drain();
    await transport.idle();
    await relay.stop();
    const docs = await journal.listDocuments(perEventCount.collection);
    expect(docs).toHaveLength(10 * LIFECYCLE.length);
    expect(docs.every((d) => (d.doc as { count: number }).count === 1)).toBe(true);
    expect(consumer.stats.duplicates).toBeGreaterThan(0);
    await transport.close();
    runtime.close();
  });
});
