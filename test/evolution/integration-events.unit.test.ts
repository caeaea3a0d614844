import { describe, expect, it } from "vitest";
import { createRuntime } from "../../src/core/runtime.js";
import { memoryJournal } from "../../src/journal/memory.js";
import { Consumer } from "../../src/messaging/consumer.js";
import type { DeadLetterPayload } from "../../src/messaging/dead-letters.js";
import { type Envelope, encodeEnvelope } from "../../src/messaging/envelope.js";
import { messagingMetrics } from "../../src/messaging/metrics.js";
import { defineProjection, eventsFromOutbox, rebuildProjection } from "../../src/messaging/projection.js";
import { orderV1 } from "./fixtures/orders-v1.js";
import { CONSUMED_V2, orderV2 } from "./fixtures/orders-v2.js";

type Sale = { email: string; channel: string; amount: number };
const sales = defineProjection<Sale>({
  collection: "sales",
  key: (e) => (e.payload as { orderId: string }).orderId,
  project: (_doc, e) => {
    const p = e.payload as Sale;
    return { email: p.email, channel: p.channel, amount: p.amount };
  },
});

const accepted = (id: string, extra: Partial<Envelope> = {}, payload?: unknown): Envelope => ({
  eventId: `order:${id}:accepted`,
  type: "OrderAccepted",
  source: "ordering",
  aggregateId: id,
  aggregateVersion: 1,
  occurredAt: "2026-01-01T00:00:00.000Z",
  correlationId: id,
  causationId: id,
  payload: payload ?? { orderId: id, customerEmail: "ann@example.com", amount: 7 },
  ...extra,
});

const delivery = (envelope: Envelope, attempt = 1) => ({
  subject: "ordering.OrderAccepted",
  body: encodeEnvelope(envelope),
  messageId: envelope.eventId,
  attempt,
  maxDeliveries: 3,
});

function consumer(mode: "facts" | "sequenced" = "facts", upcast = CONSUMED_V2) {
  const journal = memoryJournal();
  const c = new Consumer({
    name: "sales",
    journal,
    handler: sales,
    mode,
    upcast,
    metrics: messagingMetrics(),
    maxDeliveries: 3,
  });
  return { journal, c };
}

describe("integration events across versions", () => {
  it("a payload at an older schema version is upcast before the handler sees it; its copy stays a duplicate", async () => {
    for (const mode of ["facts", "sequenced"] as const) {
      const { journal, c } = consumer(mode);
      expect((await c.handle(accepted("o1"))).outcome).toBe("applied");
      expect((await journal.getDocument("sales", "o1"))?.doc).toEqual({
        email: "ann@example.com",
        channel: "web",
        amount: 7,
      });
      // Dedup compares the message as sent, not as upcast: a redelivery after an upgrade is no conflict.
      expect((await c.handle(accepted("o1"))).outcome).toBe("duplicate");
      const v2 = accepted(
        "n1",
        { schemaVersion: 2 },
        { orderId: "n1", email: "bo@example.com", amount: 3, channel: "app" },
      );
      expect((await c.handle(v2)).outcome).toBe("applied");
      expect((await journal.getDocument("sales", "n1"))?.doc).toEqual({
        email: "bo@example.com",
        channel: "app",
        amount: 3,
      });
    }
  });

  it("a projection rebuilt from the journal reads events published at older versions through the same upcasters", async () => {
    const journal = memoryJournal();
    const v1 = createRuntime({ journal, actors: [orderV1] });
    await v1.send("order/o1", { type: "PlaceOrder", customerEmail: "ann@example.com", amount: 4 });
    const v2 = createRuntime({ journal, actors: [orderV2] });
    await v2.send("order/n1", { type: "PlaceOrder", email: "bo@example.com", amount: 5, channel: "app" });
    const events = await eventsFromOutbox(journal, { kind: "OrderAccepted" });
    expect(events.map((e) => e.schemaVersion)).toEqual([undefined, 2]);
    await rebuildProjection({ journal, name: "sales", projection: sales, events, upcast: CONSUMED_V2 });
    expect((await journal.listDocuments("sales")).map((d) => d.doc)).toEqual([
      { email: "bo@example.com", channel: "app", amount: 5 },
      { email: "ann@example.com", channel: "web", amount: 4 },
    ]);
  });

  it("a payload with no upcaster path is dead-lettered at once as unreadable-version", async () => {
    const { journal, c } = consumer("facts", { OrderAccepted: { version: 3, upcast: { 1: (p) => p } } });
    const outcome = await c.deliver(delivery(accepted("o1", { schemaVersion: 2 })));
    expect(outcome.kind).toBe("ack");
    const [dead] = await journal.listDeadLetters({ consumer: "sales" });
    expect((dead?.payload as DeadLetterPayload | undefined)?.reason).toBe("unreadable-version");
    expect(dead?.error).toBe(
      'consumer "sales": cannot read OrderAccepted at version 2 as version 3: no upcaster from version 2',
    );
  });

  it("a payload newer than the consumer knows is left for a newer worker: nak'ed however often, never dead-lettered", async () => {
    const { journal, c } = consumer("sequenced");
    const newer = accepted("o1", { schemaVersion: 3 });
    for (const attempt of [1, 3, 10]) expect((await c.deliver(delivery(newer, attempt))).kind).toBe("nak");
    expect(await journal.listDeadLetters({ consumer: "sales" })).toEqual([]);
    expect(await journal.getCheckpoint("sales", "ordering/o1")).toBe(0);
  });
});
