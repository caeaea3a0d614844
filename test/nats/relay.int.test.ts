import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sequentialIds } from "../../src/core/clock.js";
import { ArmableFaults } from "../../src/core/faults.js";
import { createRuntime } from "../../src/core/runtime.js";
import { memoryJournal } from "../../src/journal/memory.js";
import { Consumer } from "../../src/messaging/consumer.js";
import { decodeEnvelope } from "../../src/messaging/envelope.js";
import { messagingMetrics } from "../../src/messaging/metrics.js";
import { Relay } from "../../src/messaging/relay.js";
import { SimulatedClock } from "../../src/testing/clock.js";
import { perEventCount, producer } from "../messaging/support/orders.js";
import { probeNats } from "../support/services.js";
import { natsFixture, waitFor } from "./support/nats.js";

const nats = await probeNats();

describe.skipIf(!nats.available)(`relay through NATS JetStream ${nats.reason}`, () => {
  let fx: Awaited<ReturnType<typeof natsFixture>>;
  beforeAll(async () => {
    fx = await natsFixture("relay");
  });
  afterAll(async () => {
    await fx?.cleanup();
  });

  function world(failCommits: () => boolean = () => false) {
    const journal = memoryJournal({ commitFault: () => (failCommits() ? "abort" : undefined) });
    const clock = new SimulatedClock();
    const faults = new ArmableFaults();
    const runtime = createRuntime({ journal, actors: [producer], clock, ids: sequentialIds("e") });
    const relay = new Relay({
      journal,
      transport: fx.transport,
      clock,
      faults,
      subjectPrefix: fx.prefix,
      leaseMs: 5000,
      metrics: messagingMetrics(),
    });
    return { journal, clock, faults, runtime, relay };
  }

  it("publishes nothing from a failed commit; a crash at relay.published republishes and the consumer applies once", async () => {
    let fail = true;
    const { journal, clock, faults, runtime, relay } = world(() => fail);
    const before = await fx.messagesInStream();
    await expect(runtime.send("producer/n1", { type: "Record", event: "OrderPlaced" })).rejects.toThrow();
    await relay.drain();
    expect(await fx.messagesInStream()).toBe(before);

    fail = false;
    await runtime.send("producer/n1", { type: "Record", event: "OrderPlaced" });
    faults.arm("relay.published");
    await expect(relay.runOnce()).rejects.toThrow(/relay.published/);
    clock.advance(5001);
    expect(await relay.drain()).toBe(1);
    expect(relay.stats.published).toBe(1);
    // Nats-Msg-Id = eventId: the broker stored the republished event once.
    expect(await fx.messagesInStream()).toBe(before + 1);

    const consumer = new Consumer({
      name: "relay-count",
      journal,
      handler: perEventCount,
      metrics: messagingMetrics(),
    });
    const sub = await consumer.subscribe(fx.transport, { subjects: [`${fx.prefix}.>`] });
    await waitFor(async () => consumer.stats.applied === 1, "the event to be applied");
    await sub.stop();
    await fx.transport.deleteConsumer("relay-count");
    expect((await journal.listDocuments(perEventCount.collection)).map((d) => d.doc)).toEqual([
      { count: 1, type: "OrderPlaced" },
    ]);
  });

  it("per aggregate, the stream holds events in commit order", async () => {
    const { runtime, relay } = world();
    const types = ["A", "B", "C", "D", "E"];
    for (const t of types)
      for (const id of ["p", "q", "r"]) await runtime.send(`producer/${id}`, { type: "Record", event: t });
    await relay.drain();
    const seen = new Map<string, string[]>();
    const sub = await fx.transport.subscribe(
      "order-check",
      { subjects: [`${fx.prefix}.>`], concurrency: 1 },
      async (d) => {
        const e = decodeEnvelope(d.body);
        if (["p", "q", "r"].includes(e.aggregateId))
          seen.set(e.aggregateId, [...(seen.get(e.aggregateId) ?? []), e.type]);
        return { kind: "ack" };
      },
    );
    await waitFor(() => [...seen.values()].reduce((n, v) => n + v.length, 0) === 15, "15 deliveries");
    await sub.stop();
    await fx.transport.deleteConsumer("order-check");
    for (const id of ["p", "q", "r"]) expect(seen.get(id)).toEqual(types);
  });
});
