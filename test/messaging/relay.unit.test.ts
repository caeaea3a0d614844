import { describe, expect, it } from "vitest";
import { SLEEP_CANCELLED, sequentialIds } from "../../src/core/clock.js";
import { ArmableFaults } from "../../src/core/faults.js";
import { createRuntime } from "../../src/core/runtime.js";
import { memoryJournal, StoreFault } from "../../src/journal/memory.js";
import { Consumer } from "../../src/messaging/consumer.js";
import type { Envelope } from "../../src/messaging/envelope.js";
import { messagingMetrics } from "../../src/messaging/metrics.js";
import { Relay } from "../../src/messaging/relay.js";
import { InProcessTransport } from "../../src/messaging/transports/in-process.js";
import { SimulatedClock } from "../../src/testing/clock.js";
import { cancelRecordingClock } from "../support/recording-clock.js";
import { perEventCount, producer } from "./support/orders.js";

function setup(options: { failCommits?: () => boolean; dedupPublishes?: boolean } = {}) {
  const journal = memoryJournal({ commitFault: () => (options.failCommits?.() ? "abort" : undefined) });
  const clock = new SimulatedClock();
  const faults = new ArmableFaults();
  const runtime = createRuntime({ journal, actors: [producer], clock, ids: sequentialIds("ev") });
  const transport = new InProcessTransport({ clock, dedupPublishes: options.dedupPublishes ?? true });
  const published: { subject: string; envelope: Envelope }[] = [];
  const recording = {
    name: "recording",
    publish: async (envelope: Envelope, subject: string) => {
      published.push({ subject, envelope });
      await transport.publish(envelope, subject);
    },
    subscribe: transport.subscribe.bind(transport),
    close: transport.close.bind(transport),
  };
  const relay = new Relay({
    journal,
    transport: recording,
    clock,
    faults,
    subjectPrefix: "shop",
    leaseMs: 5000,
    metrics: messagingMetrics(),
  });
  return { journal, clock, faults, runtime, transport, relay, published };
}

describe("relay", () => {
  it("publishes nothing from a commit that failed", async () => {
    let fail = true;
    const { runtime, relay, published, journal } = setup({ failCommits: () => fail });
    await expect(runtime.send("producer/a", { type: "Record", event: "OrderPlaced" })).rejects.toThrow(StoreFault);
    expect(await relay.drain()).toBe(0);
    expect(published).toEqual([]);
    fail = false;
    await runtime.send("producer/a", { type: "Record", event: "OrderPlaced" });
    await relay.drain();
    expect(published.map((p) => p.subject)).toEqual(["shop.orders.OrderPlaced"]);
    expect((await journal.listOutbox({ category: "event" }))[0]).toMatchObject({
      status: "done",
      outcome: "published",
    });
  });

  it("publishes per aggregate in commit order", async () => {
    const { runtime, relay, published } = setup();
    const types = ["A", "B", "C", "D"];
    for (const t of types) {
      for (const id of ["x", "y", "z"]) await runtime.send(`producer/${id}`, { type: "Record", event: t });
    }
    await relay.drain();
    for (const id of ["x", "y", "z"]) {
      const mine = published.filter((p) => p.envelope.aggregateId === id);
      expect(mine.map((p) => p.envelope.type)).toEqual(types);
      expect(mine.map((p) => p.envelope.aggregateVersion)).toEqual([1, 2, 3, 4]);
    }
  });

  it("a crash at relay.published republishes after the lease, and the consumer applies once", async () => {
    const { runtime, relay, published, transport, clock, faults, journal } = setup({ dedupPublishes: false });
    const consumer = new Consumer({
      name: "count",
      journal,
      handler: perEventCount,
      clock,
      metrics: messagingMetrics(),
    });
    const subscription = await consumer.subscribe(transport, { subjects: ["shop.>"] });
    await runtime.send("producer/a", { type: "Record", event: "OrderPlaced" });
    faults.arm("relay.published");
    await expect(relay.runOnce()).rejects.toThrow(/relay.published/);
    expect(await relay.drain()).toBe(0); // still leased
    clock.advance(5001);
    expect(await relay.drain()).toBe(1);
    expect(published).toHaveLength(2);
    await transport.idle();
    const docs = await journal.listDocuments(perEventCount.collection);
    expect(docs.map((d) => d.doc)).toEqual([{ count: 1, type: "OrderPlaced" }]);
    expect(consumer.stats.duplicates).toBe(1);
    await subscription.stop();
  });

  it("a crash at relay.beforePublish publishes nothing then, and the row once after the lease", async () => {
    const { runtime, relay, published, clock, faults, journal } = setup();
    await runtime.send("producer/a", { type: "Record", event: "OrderPlaced" });
    faults.arm("relay.beforePublish");
    await expect(relay.runOnce()).rejects.toThrow(/relay.beforePublish/);
    expect(published).toEqual([]);
    expect((await journal.listOutbox({ category: "event" }))[0]?.status).toBe("pending");
    expect(await relay.drain()).toBe(0); // still leased
    clock.advance(5001);
    expect(await relay.drain()).toBe(1);
    expect(published.map((p) => p.subject)).toEqual(["shop.orders.OrderPlaced"]);
  });

  it("cuts its idle sleep short with one constant reason when woken, building no DOMException", async () => {
    const journal = memoryJournal();
    const runtime = createRuntime({ journal, actors: [producer], ids: sequentialIds("ev") });
    const transport = new InProcessTransport();
    const { clock, reasons } = cancelRecordingClock();
    const relay = new Relay({ journal, transport, clock, pollMs: 3_600_000, metrics: messagingMetrics() });
    relay.start();
    await new Promise((r) => setTimeout(r, 20));
    await runtime.send("producer/a", { type: "Record", event: "First" });
    for (let i = 0; i < 200 && (await journal.listOutbox({ category: "event" }))[0]?.status !== "done"; i++) {
      await new Promise((r) => setTimeout(r, 5));
    }
    await relay.stop();
    await transport.close();
    expect((await journal.listOutbox({ category: "event" }))[0]?.status).toBe("done");
    expect(reasons.length).toBeGreaterThanOrEqual(1);
    expect(reasons.every((reason) => reason === SLEEP_CANCELLED)).toBe(true);
  });

  it("retries a failed publish with backoff, keeping later events of that aggregate behind it", async () => {
    const { runtime, journal, clock, transport } = setup();
    let down = true;
    const published: string[] = [];
    const relay = new Relay({
      journal,
      clock,
      metrics: messagingMetrics(),
      retryBaseMs: 100,
      transport: {
        name: "flaky",
        publish: async (e, s) => {
          if (down) throw new Error("broker unreachable");
          published.push(e.type);
          await transport.publish(e, s);
        },
        subscribe: transport.subscribe.bind(transport),
        close: async () => {},
      },
    });
    await runtime.send("producer/a", { type: "Record", event: "First" });
    await runtime.send("producer/a", { type: "Record", event: "Second" });
    expect(await relay.runOnce()).toBe(1);
    expect(await relay.runOnce()).toBe(0); // First waits for its backoff; Second waits behind it
    expect((await journal.listOutbox({ category: "event" }))[0]).toMatchObject({
      attempts: 1,
      lastError: "broker unreachable",
    });
    down = false;
    clock.advance(100);
    await relay.drain();
    expect(published).toEqual(["First", "Second"]);
  });

  it("start() relays in the background, woken by the journal's outbox signal", async () => {
    const { runtime, relay, published } = setup();
    relay.start();
    await runtime.send("producer/b", { type: "Record", event: "OrderPlaced" });
    for (let i = 0; i < 100 && published.length === 0; i++) await new Promise((r) => setTimeout(r, 5));
    await relay.stop();
    expect(published.map((p) => p.envelope.eventId)).toEqual(["b:1:OrderPlaced"]);
  });
});
