import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Delivery, Journal } from "oncely";
import { type DeadLetterPayload, DeadLetters, type Envelope, signerFor, subjectFor } from "oncely";
import { encodeEnvelope } from "oncely/advanced";
import { sqliteJournal } from "oncely/sqlite";
import { afterAll, describe, expect, it } from "vitest";
import { onPostgres } from "../../../test/journal/pg-subject.js";
import { devShopKeys } from "../integration/keys.js";
import type { OrderState } from "../ordering/state.js";
import { deriveStatus } from "../ordering/status.js";
import { allConsumers, type OrderScript, produce, shopWorld } from "./harness.js";

const NUL = "\u0000";
const FLOOD = 200;

const script: OrderScript = {
  orderId: "o1",
  order: {
    type: "PlaceOrder",
    customerEmail: "ada@example.com",
    currency: "EUR",
    lines: [{ sku: "book", quantity: 1, unitPrice: 1250 }],
  },
  payment: "paid",
  shipBeforePicklistOutcome: false,
};

const forged = (over: Partial<Envelope>): Envelope => ({
  eventId: "payment:o1:processed",
  type: "PaymentProcessed",
  source: "payment",
  aggregateId: "o1",
  aggregateVersion: 1,
  occurredAt: "2026-01-01T00:00:00.000Z",
  correlationId: "o1",
  causationId: "x",
  payload: { orderId: "o1", paymentId: "pay_x", amount: 1250, currency: "EUR" },
  ...over,
});

/**
 * Poison that passes authentication: signed with the producing context's real key (a buggy or
 * compromised producer), so what is tested here is the storage and conflict path, not the
 * signature check (examples/shop/contexts/authenticity.unit.test.ts covers forgeries).
 */
const signer = signerFor(devShopKeys());
const encodeSigned = (envelope: Envelope): string => encodeEnvelope(signer.sign(envelope));

/** What a producer put on `shop.>`: NULs and lone surrogates in ids and payloads, prototype names, an unknown type. */
function hostile(i: number): string {
  switch (i % 6) {
    case 0:
      return encodeSigned(forged({ eventId: `evt-${i}${NUL}` }));
    case 1:
      return encodeSigned(
        forged({
          eventId: `evt-${i}`,
          type: "OrderPlaced",
          source: "ordering",
          payload: {
            orderId: "o1",
            currency: "EUR",
            amount: 1,
            lines: [{ sku: `b${NUL}`, quantity: 1, unitPrice: 1 }],
          },
        }),
      );
    case 2:
      return encodeSigned(forged({ eventId: `evt-${i}`, payload: { orderId: "o1", paymentId: "pay_\uD800" } }));
    case 3:
      return encodeSigned(
        forged({
          eventId: `evt-${i}`,
          aggregateId: "__proto__",
          payload: { orderId: "__proto__", paymentId: "p", amount: 1, currency: "EUR" },
        }),
      );
    case 4:
      return encodeSigned(forged({ eventId: `evt-${i}`, aggregateId: "constructor" }));
    default:
      // A type no handler knows, at version 1 of a payment stream of its own: a sequenced consumer
      // consumes the version as a no-op (counted `ignored`), a facts consumer passes it over.
      return encodeSigned(
        forged({ eventId: `evt-${i}`, type: "PaymentMaybe", aggregateId: `ghost-${i}`, payload: { orderId: "o1" } }),
      );
  }
}

/** The subject the envelope's producer publishes on (`shop.<source>.<Type>`), as the first delivery. */
const first = (body: string): Delivery => {
  const { source, type } = JSON.parse(body) as Envelope;
  return { subject: subjectFor("shop", { source, type }), body, messageId: undefined, attempt: 1, maxDeliveries: 5 };
};
/**
 * The finding, through the shop's own consumers on a real store: a flood of poison
 * messages on every durable, then an order that must complete as usual, with its payment in the
 * timeline (not shadowed by the unknown type), and a later copy of a real event with other
 * content recorded as a conflict.
 */
async function floodThenOrder(journal: Journal): Promise<void> {
  const world = shopWorld(journal);
  const consumers = allConsumers(world);
  for (const consumer of consumers) {
    for (let i = 0; i < FLOOD; i++) expect(await consumer.deliver(first(hostile(i)))).toEqual({ kind: "ack" });
  }
  const { envelopes } = await produce([script], world);
  const order = await world.runtime.state<OrderState>("order/o1");
  expect(deriveStatus(order.state)).toBe("completed");
  const timeline = await journal.getDocument("order-timelines", "o1/payment");
  expect(timeline?.doc).toMatchObject({ entries: [{ type: "PaymentProcessed", aggregateVersion: 1 }] });

  const processed = envelopes.find((e) => e.type === "PaymentProcessed") as Envelope;
  const views = world.contexts.consumers.views;
  const copy = { ...processed, payload: { ...(processed.payload as object), paymentId: "pay_ATTACKER" } };
  expect(await views.deliver(first(encodeSigned(copy)))).toEqual({ kind: "ack" });

  const letters = (await new DeadLetters(journal).list({ limit: 10_000 })).map((l) => ({
    ...l,
    payload: l.payload as DeadLetterPayload,
  }));
  // Every hostile message is a dead letter of every durable that received it (one attempt each),
  // but the unknown type, which no handler has a key for: the sequenced timeline consumes its
  // version as a no-op, the facts view passes it over.
  expect(letters.every((l) => l.attempts === 1)).toBe(true);
  const unknownTypes = Math.ceil((FLOOD - 5) / 6);
  const of = (name: string) => letters.filter((l) => l.consumer === name && l.payload.reason !== "conflict");
  expect(of(world.contexts.consumers.timeline.name)).toHaveLength(FLOOD - unknownTypes);
  expect(of(views.name)).toHaveLength(FLOOD - unknownTypes);
  for (const consumer of consumers) expect(of(consumer.name).length).toBeGreaterThan(0);
  // ...and the copy with other content is a conflict, not a duplicate.
  const conflict = letters.find((l) => l.payload.reason === "conflict");
  expect(conflict).toMatchObject({ consumer: views.name, messageId: processed.eventId });
  expect((await journal.getDocument("order-views", "o1"))?.doc).toMatchObject({ paymentId: "pay_o1" });
}

const dir = mkdtempSync(join(tmpdir(), "oncely-shop-poison-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("the shop under a poison flood", () => {
  it("sqlite: every poison message is dead-lettered on its first delivery and the next order completes", async () => {
    const journal = sqliteJournal({ path: join(dir, "shop.db") });
    await journal.migrate();
    try {
      await floodThenOrder(journal);
    } finally {
      await journal.close();
    }
  });
});

await onPostgres("shop_poison", `the shop under a poison flood: postgres`, (factory) => {
  describe("the shop under a poison flood", () => {
    it("postgres: every poison message is dead-lettered on its first delivery and the next order completes", async () => {
      const { journal, cleanup } = await factory();
      try {
        await floodThenOrder(journal);
      } finally {
        await cleanup();
      }
    });
  });
});
