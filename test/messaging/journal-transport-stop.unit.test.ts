import { describe, expect, it } from "vitest";
import { MemoryJournal } from "../../src/journal/memory.js";
import { PUBLISHED_READER_SOURCE } from "../../src/journal/published.js";
import { parseEnvelope } from "../../src/messaging/envelope.js";
import type { Delivery, DeliveryOutcome } from "../../src/messaging/transport.js";
import { JournalTransport } from "../../src/messaging/transports/journal.js";
import { orderEvent } from "./support/orders.js";

const eventIdOf = (d: Delivery) => parseEnvelope(JSON.parse(d.body)).eventId;

/**
 * A journal-transport reader stopped gracefully while entries it read wait for a handler slot:
 * the handler in flight finishes and its entry is settled; the waiting ones were never handed to
 * the handler, so the stored position stays below them and the next reader delivers them.
 */
describe("journal transport: a graceful stop with entries waiting for a handler slot", () => {
  it("stores its position past the handled entry only; the next reader delivers the waiting ones", async () => {
    const journal = new MemoryJournal();
    const transport = new JournalTransport({ journal, pollMs: 20 });
    const events = [1, 2, 3].map((v) => orderEvent("w1", v));
    for (const [i, event] of events.entries()) await transport.publish(event, `shop.orders.v${i + 1}`);
    const [first] = await journal.readPublished(0);

    const seen: string[] = [];
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let started: () => void = () => {};
    const inHandler = new Promise<void>((resolve) => {
      started = resolve;
    });
    const handler = async (d: Delivery): Promise<DeliveryOutcome> => {
      seen.push(eventIdOf(d));
      started();
      await held;
      return { kind: "ack" };
    };
    // One slot: the first entry holds it, the other two wait for it.
    const subscription = await transport.subscribe("slots", { subjects: ["shop.>"], concurrency: 1 }, handler);
    await inHandler;
    const stopped = subscription.stop();
    release();
    await stopped;
    expect(seen).toEqual([events[0]?.eventId]);
    expect(await journal.getCheckpoint("slots", PUBLISHED_READER_SOURCE)).toBe(first?.position);

    const next: string[] = [];
    await transport.subscribe("slots", { subjects: ["shop.>"] }, async (d) => {
      next.push(eventIdOf(d));
      return { kind: "ack" };
    });
    await transport.idle();
    expect(next).toEqual([events[1]?.eventId, events[2]?.eventId]);
    await transport.close();
  });
});
