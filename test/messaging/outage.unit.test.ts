import { describe, expect, it } from "vitest";
import { StorageUnavailableError } from "../../src/base/errors.js";
import { sequentialIds } from "../../src/core/clock.js";
import { memoryJournal } from "../../src/journal/memory.js";
import type { Commit, Journal } from "../../src/journal/types.js";
import { Consumer } from "../../src/messaging/consumer.js";
import { encodeEnvelope } from "../../src/messaging/envelope.js";
import { messagingMetrics } from "../../src/messaging/metrics.js";
import type { Delivery } from "../../src/messaging/transport.js";
import { SimulatedClock } from "../../src/testing/clock.js";
import { orderEvent, perEventCount } from "./support/orders.js";

const delivery = (body: string, attempt: number): Delivery => ({
  subject: "shop.orders.X",
  body,
  messageId: undefined,
  attempt,
  maxDeliveries: 3,
});

/** A journal whose commits fail as if the database were unreachable, while `down` is true. */
function flakyJournal() {
  const inner = memoryJournal();
  const state = { down: true };
  const journal: Journal = Object.assign(Object.create(inner), {
    commit: (c: Commit) =>
      state.down ? Promise.reject(new StorageUnavailableError("PostgreSQL unavailable (test)")) : inner.commit(c),
  });
  return { journal, state };
}

const consumerOn = (journal: Journal) =>
  new Consumer({
    name: "view",
    journal,
    handler: perEventCount,
    clock: new SimulatedClock(),
    ids: sequentialIds("dl"),
    metrics: messagingMetrics(),
    maxDeliveries: 3,
  });

describe("a consumer while its journal is unreachable", () => {
  it("never gives up on a message because of the outage, however many deliveries it takes", async () => {
    const { journal, state } = flakyJournal();
    const consumer = consumerOn(journal);
    const body = encodeEnvelope(orderEvent("o1", 1));
    for (let attempt = 1; attempt <= 10; attempt++) {
      expect((await consumer.deliver(delivery(body, attempt))).kind).toBe("nak");
    }
    expect(await journal.listDeadLetters()).toEqual([]);
    state.down = false;
    expect(await consumer.deliver(delivery(body, 11))).toEqual({ kind: "ack" });
    expect((await journal.getDocument(perEventCount.collection, "o1:OrderPlaced"))?.doc).toMatchObject({ count: 1 });
  });

  it("a poison message whose dead letter cannot be written yet is nak'ed, and dead-lettered once it can", async () => {
    const { journal, state } = flakyJournal();
    const consumer = consumerOn(journal);
    expect((await consumer.deliver(delivery("{not json", 1))).kind).toBe("nak");
    state.down = false;
    expect(await consumer.deliver(delivery("{not json", 2))).toEqual({ kind: "ack" });
    const letters = await journal.listDeadLetters();
    expect(letters).toHaveLength(1);
    expect(letters[0]?.error).toMatch(/not JSON/);
  });
});
