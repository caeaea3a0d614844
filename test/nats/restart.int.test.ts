import { existsSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sequentialIds } from "../../src/core/clock.js";
import { createRuntime } from "../../src/core/runtime.js";
import { memoryJournal } from "../../src/journal/memory.js";
import { Consumer } from "../../src/messaging/consumer.js";
import { messagingMetrics } from "../../src/messaging/metrics.js";
import { Relay } from "../../src/messaging/relay.js";
import { orderTimeline, perEventCount, producer } from "../messaging/support/orders.js";
import { freePort, natsFixture, PrivateNatsServer, waitFor } from "./support/nats.js";

/**
 * A private nats-server (the shared one cannot be restarted under other tests' feet), killed and
 * restarted while events are being produced, relayed and consumed.
 */
const binary = existsSync("/usr/sbin/nats-server");

describe.skipIf(!binary)("broker restart mid-run (private nats-server)", () => {
  let server: PrivateNatsServer;
  let fx: Awaited<ReturnType<typeof natsFixture>>;
  beforeAll(async () => {
    server = new PrivateNatsServer(await freePort());
    await server.start();
    fx = await natsFixture("restart", { url: server.url, storage: "file" });
  });
  afterAll(async () => {
    await fx?.cleanup();
    await server?.dispose();
  });

  it("loses nothing and applies nothing twice", async () => {
    const journal = memoryJournal();
    const runtime = createRuntime({ journal, actors: [producer], ids: sequentialIds("e") });
    const relay = new Relay({
      journal,
      transport: fx.transport,
      subjectPrefix: fx.prefix,
      pollMs: 50,
      retryBaseMs: 50,
      retryMaxMs: 300,
      leaseMs: 10_000,
      metrics: messagingMetrics(),
    });
    const metrics = messagingMetrics();
    const counts = new Consumer({ name: "counts", journal, handler: perEventCount, metrics, retryBaseMs: 20 });
    const timeline = new Consumer({ name: "timeline", journal, handler: orderTimeline, mode: "sequenced", metrics });
    const subs = [
      await counts.subscribe(fx.transport, { subjects: [`${fx.prefix}.>`] }),
      await timeline.subscribe(fx.transport, { subjects: [`${fx.prefix}.>`], concurrency: 8 }),
    ];
    relay.start();

    const streams = ["a", "b", "c", "d", "e"];
    const perStream = 30;
    const total = streams.length * perStream;
    for (let i = 1; i <= perStream; i++) {
      for (const s of streams) await runtime.send(`producer/${s}`, { type: "Record", event: `E${i}` });
      if (i === 10) {
        await waitFor(async () => counts.stats.applied > 5, "some events consumed before the crash");
        await server.kill();
      }
      if (i === 15) await server.start(); // same port, same store directory
      await new Promise((resolve) => setTimeout(resolve, 5));
    }

    await waitFor(
      async () => (await journal.listDocuments(perEventCount.collection)).length === total,
      "all events consumed",
      50_000,
    );
    await waitFor(async () => {
      const docs = await journal.listDocuments(orderTimeline.collection);
      return docs.every((d) => (d.doc as { timeline: string[] }).timeline.length === perStream);
    }, "all timelines complete");
    await relay.stop();
    for (const sub of subs) await sub.stop();

    const docs = await journal.listDocuments(perEventCount.collection);
    expect(docs.every((d) => (d.doc as { count: number }).count === 1)).toBe(true);
    expect(await journal.listOutbox({ category: "event", status: "pending" })).toEqual([]);
    for (const s of streams) {
      const doc = (await journal.getDocument(orderTimeline.collection, s))?.doc as { timeline: string[] };
      expect(doc.timeline).toEqual(Array.from({ length: perStream }, (_, i) => `${i + 1}:E${i + 1}`));
    }
    expect(await journal.listParked("timeline")).toEqual([]);
    expect(await journal.listDeadLetters()).toEqual([]);
  });
});
