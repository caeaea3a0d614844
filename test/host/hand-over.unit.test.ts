import { describe, expect, it } from "vitest";
import { sequentialIds } from "../../src/core/clock.js";
import { createHost } from "../../src/host/host.js";
import { MemoryJournal } from "../../src/journal/memory.js";
import { InProcessTransport } from "../../src/messaging/transports/in-process.js";
import { JournalTransport } from "../../src/messaging/transports/journal.js";
import { orderTimeline, perEventCount, producer } from "../messaging/support/orders.js";

async function run(handOver: boolean | undefined) {
  const journal = new MemoryJournal();
  const transport = new JournalTransport({ journal, pollMs: 20 });
  const other = new InProcessTransport();
  const host = createHost({
    journal,
    actors: [producer],
    ids: sequentialIds("e"),
    relay: { transport, subjectPrefix: "shop", ...(handOver === undefined ? {} : { handOver }) },
    consumers: [
      { name: "count", handler: perEventCount, subjects: ["shop.>"] },
      // On a transport of its own: the relay's events never reach it, so none is handed to it.
      { name: "elsewhere", handler: orderTimeline, subjects: ["shop.>"], transport: other },
    ],
    gapCheckEveryMs: false,
  });
  await host.start();
  try {
    for (let i = 1; i <= 3; i++) await host.send(`producer/p${i}`, { type: "Record", event: "E1" });
    await host.drain({ timeoutMs: 10_000 });
    const docs = await journal.listDocuments(perEventCount.collection);
    const [count, elsewhere] = host.consumers;
    return { docs, count: { ...count?.stats }, elsewhere: { ...elsewhere?.stats }, relay: host.relay?.handOverStats };
  } finally {
    await host.stop();
    await transport.close();
    await other.close();
  }
}

describe("a host hands its actors' events to its consumers at commit", () => {
  it("to the consumers on the relay's transport, whose durable copies settle from memory", async () => {
    const { docs, count, elsewhere, relay } = await run(undefined);
    expect(docs.map((d) => (d.doc as { count: number }).count)).toEqual([1, 1, 1]);
    expect(count).toMatchObject({ applied: 3, handedOver: 3, copiesSettled: 3, duplicates: 0 });
    expect(elsewhere).toMatchObject({ applied: 0, handedOver: 0 });
    expect(relay).toMatchObject({ handedOver: 3, delivered: 3 });
  });

  it("to none with handOver: false: the relay claims every event", async () => {
    const { docs, count, relay } = await run(false);
    expect(docs.map((d) => (d.doc as { count: number }).count)).toEqual([1, 1, 1]);
    expect(count).toMatchObject({ applied: 3, handedOver: 0, copiesSettled: 0 });
    expect(relay).toMatchObject({ handedOver: 0 });
  });
});
