import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sequentialIds } from "../../src/core/clock.js";
import { memoryJournal } from "../../src/journal/memory.js";
import { Consumer } from "../../src/messaging/consumer.js";
import { DeadLetters } from "../../src/messaging/dead-letters.js";
import { messagingMetrics } from "../../src/messaging/metrics.js";
import { defineProjection } from "../../src/messaging/projection.js";
import { subjectFor } from "../../src/messaging/subjects.js";
import { orderEvent, orderEvents, perEventCount } from "../messaging/support/orders.js";
import { probeNats } from "../support/services.js";
import { natsFixture, waitFor } from "./support/nats.js";

const nats = await probeNats();

describe.skipIf(!nats.available)(`consumers on NATS JetStream ${nats.reason}`, () => {
  let fx: Awaited<ReturnType<typeof natsFixture>>;
  beforeAll(async () => {
    fx = await natsFixture("consumer");
  });
  afterAll(async () => {
    await fx?.cleanup();
  });

  it("a consumer killed after its commit and before the ack gets the message again and applies it once", async () => {
    const journal = memoryJournal();
    const consumer = new Consumer({ name: "killed", journal, handler: perEventCount, metrics: messagingMetrics() });
    const events = orderEvents([3, 3]).map((e) => ({ ...e, source: "kill" }));
    for (const e of events) await fx.transport.publish(e, subjectFor(fx.prefix, e));

    // First process: its connection dies right after the first commit, before any ack.
    const doomed = await fx.open();
    let killed = false;
    await doomed.subscribe("killed", { subjects: [`${fx.prefix}.kill.*`], concurrency: 1 }, async (d) => {
      const outcome = await consumer.deliver(d);
      if (!killed) {
        killed = true;
        await doomed.connection.close();
      }
      return outcome;
    });
    await waitFor(() => killed, "the first delivery");

    // Second process: same durable, same journal.
    const survivor = await fx.open();
    const sub = await consumer.subscribe(survivor, { subjects: [`${fx.prefix}.kill.*`] });
    await waitFor(async () => (await journal.listDocuments(perEventCount.collection)).length === 6, "all six applied");
    await waitFor(() => consumer.stats.duplicates >= 1, "the unacked message to come back");
    await sub.stop();
    const docs = await journal.listDocuments(perEventCount.collection);
    expect(docs.map((d) => (d.doc as { count: number }).count)).toEqual([1, 1, 1, 1, 1, 1]);
    await survivor.deleteConsumer("killed");
  });

  it("a malformed message is dead-lettered and the consumer goes on; a failing one is retried, dead-lettered, and replayed once", async () => {
    const journal = memoryJournal();
    let broken = true;
    const fragile = defineProjection<{ count: number }>({
      collection: "fragile",
      key: (e) => e.eventId,
      project(doc, e) {
        if (broken && e.aggregateId === "bad") throw new Error("read-model constraint violated");
        return { count: (doc?.count ?? 0) + 1 };
      },
    });
    const consumer = new Consumer({
      name: "fragile",
      journal,
      handler: fragile,
      metrics: messagingMetrics(),
      maxDeliveries: 3,
      retryBaseMs: 20,
      retryMaxMs: 50,
      ids: sequentialIds("dl"),
    });
    const sub = await consumer.subscribe(fx.transport, { subjects: [`${fx.prefix}.dl.*`] });
    await fx.transport.publishRaw(`${fx.prefix}.dl.Garbage`, "this is not an envelope", "garbage-1");
    const bad = { ...orderEvent("bad", 1), source: "dl" };
    await fx.transport.publish(bad, subjectFor(fx.prefix, bad));
    // Fresh ids: the stream's dedup window would drop ids published by the previous test.
    const good = [orderEvent("g1", 1), orderEvent("g1", 2)].map((e) => ({ ...e, source: "dl" }));
    for (const e of good) await fx.transport.publish(e, subjectFor(fx.prefix, e));

    await waitFor(async () => (await journal.listDeadLetters()).length === 2, "two dead letters");
    await waitFor(async () => (await journal.listDocuments("fragile")).length === 2, "the good events");
    const letters = await journal.listDeadLetters();
    const garbage = letters.find((l) => l.messageId === "garbage-1");
    const failed = letters.find((l) => l.messageId === bad.eventId);
    expect(garbage).toMatchObject({ attempts: 1, status: "open" });
    expect(garbage?.error).toMatch(/not JSON/);
    expect(failed).toMatchObject({ attempts: 3, error: "read-model constraint violated" });

    broken = false;
    const deadLetters = new DeadLetters(journal, { consumers: [consumer] });
    expect((await deadLetters.replay(failed?.id as string)).outcome).toBe("applied");
    expect(await deadLetters.replay(failed?.id as string).catch((e: Error) => e.message)).toMatch(/already replayed/);
    await expect(deadLetters.replay(garbage?.id as string)).rejects.toThrow(/not JSON/);
    expect((await journal.getDocument("fragile", bad.eventId))?.doc).toEqual({ count: 1 });
    await sub.stop();
    await fx.transport.deleteConsumer("fragile");
  });
});
