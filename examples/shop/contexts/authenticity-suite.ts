import type { Envelope, Journal } from "oncely";
import { signerFor, subjectFor } from "oncely";
import { describe, expect, it } from "vitest";
import { eventIds, SHOP_SUBJECT_PREFIX } from "../integration/events.js";
import { devShopKeys } from "../integration/keys.js";
import type { OrderState } from "../ordering/state.js";
import { deriveStatus } from "../ordering/status.js";
import {
  forged,
  forgedEarlyShipment,
  forgedOrderPlaced,
  forgedPaymentFailed,
  forgedPaymentProcessed,
} from "./forgeries.js";
import {
  allConsumers,
  type OrderScript,
  produceThroughTransport,
  type ShopWorld,
  shopWorld,
  snapshot,
} from "./harness.js";

/**
 * Forged integration events, published on the shop's transport as anyone who can reach the broker
 * could: each one is dead-lettered by every consumer that sees it, and changes nothing. The real
 * events go the real way (relay signs, in-process transport, consumers verify). One body for every
 * back end: `authenticity.unit.test.ts` runs it on memory, `authenticity.int.test.ts` on SQLite
 * and PostgreSQL (the dead letters, inboxes and views of a refusal are rows of the real store).
 */

/** A journal of the back end under test, and how to dispose of it after one test. */
export interface OpenedJournal {
  journal: Journal;
  cleanup(): Promise<void>;
}

const script = (orderId: string, payment: OrderScript["payment"]): OrderScript => ({
  orderId,
  order: {
    type: "PlaceOrder",
    customerEmail: `${orderId}@example.com`,
    currency: "EUR",
    lines: [{ sku: "book", quantity: 1, unitPrice: 1250 }],
  },
  payment,
  shipBeforePicklistOutcome: false,
});

const keys = devShopKeys();
/** Signed with a valid key of another context (which an attacker inside that context holds). */
const signedBy = (context: keyof typeof keys, envelope: Envelope) =>
  signerFor({ [envelope.source]: keys[context] }).sign(envelope);

async function inWorld(open: () => Promise<OpenedJournal>, body: (w: ShopWorld) => Promise<void>): Promise<void> {
  const { journal, cleanup } = await open();
  try {
    const w = shopWorld(journal);
    for (const consumer of allConsumers(w))
      await consumer.subscribe(w.transport, { subjects: [`${SHOP_SUBJECT_PREFIX}.>`] });
    await body(w);
  } finally {
    await cleanup();
  }
}

/** Publish as a producer would, under the broker's dedup id (`brokerMessageId`). */
async function publish(w: ShopWorld, envelopes: Envelope[]): Promise<void> {
  for (const envelope of envelopes) await w.transport.publish(envelope, subjectFor(SHOP_SUBJECT_PREFIX, envelope));
  await w.transport.idle();
}

async function status(w: ShopWorld, orderId: string) {
  return deriveStatus((await w.runtime.state<OrderState>(`order/${orderId}`)).state);
}

/** Every consumer dead-letters every forgery, with its reason, and counts it. */
async function expectRejectedByAll(w: ShopWorld, count: number): Promise<void> {
  const consumers = allConsumers(w);
  const letters = await w.journal.listDeadLetters({});
  expect(letters).toHaveLength(count * consumers.length);
  for (const letter of letters) expect(letter.error).toMatch(/^(unsigned|unknown-key|bad-signature|source-mismatch): /);
  const metric = await w.contexts.metrics.registry.getSingleMetric("oncely_consumer_rejected_total")?.get();
  expect(metric?.values.reduce((n, v) => n + v.value, 0)).toBe(count * consumers.length);
  for (const consumer of consumers) expect(consumer.stats.deadLetters).toBe(count);
}

/**
 * A forgery that must change nothing: the orders of `scripts` run the real way, then the forgeries
 * (made from the real events where they replay one) are published; every store and view is as
 * before, and every consumer refused every forgery.
 */
interface Forgery {
  finding: string;
  scripts: OrderScript[];
  forgeries(real: Envelope[]): Envelope[];
}

/** The real event of `eventId` as the relay signed it. */
const signedReal = (real: Envelope[], eventId: string): Envelope =>
  signerFor(keys).sign(real.find((e) => e.eventId === eventId) as Envelope);
const withPaymentId = (envelope: Envelope, paymentId: string): Envelope => ({
  ...envelope,
  payload: { ...(envelope.payload as object), paymentId },
});

const FORGERIES: Forgery[] = [
  {
    finding: "a forged PaymentProcessed for a declined order",
    scripts: [script("d1", "declined")],
    forgeries: () => [forgedPaymentProcessed("d1")],
  },
  {
    finding: "a forged PaymentFailed for a charged order",
    scripts: [script("c1", "paid")],
    forgeries: () => [forgedPaymentFailed("c1")],
  },
  {
    finding: "a forged OrderPlaced (nobody is charged)",
    scripts: [],
    forgeries: () => [forgedOrderPlaced("x1")],
  },
  {
    finding: "forgeries signed with another context's valid key",
    scripts: [script("d1", "declined"), script("c1", "paid")],
    forgeries: () => [
      signedBy("shipping", forgedPaymentProcessed("d1")),
      signedBy("ordering", forgedPaymentFailed("c1")),
      signedBy("payment", forgedOrderPlaced("x1")),
    ],
  },
  {
    // Published right after the real one, inside the broker's dedup window: the copy's dedup id
    // hashes its content, so the broker does not drop it silently; the consumers refuse it.
    finding: "a real message replayed with a modified payload, under its own eventId and under a new one",
    scripts: [script("c1", "paid")],
    forgeries: (real) => {
      const processed = signedReal(real, eventIds.paymentProcessed("c1"));
      return [
        withPaymentId(processed, "pay_X"),
        { ...withPaymentId(processed, "pay_Y"), eventId: "payment:c1:processed-again" },
      ];
    },
  },
];

export function authenticitySuite(backEnd: string, open: () => Promise<OpenedJournal>): void {
  describe(`forged integration events on the shop's transport (${backEnd})`, () => {
    for (const { finding, scripts, forgeries } of FORGERIES) {
      it(`${finding} is refused by every consumer and changes nothing`, () =>
        inWorld(open, async (w) => {
          const real = await produceThroughTransport(w, scripts);
          const before = await snapshot(w);
          const forged = forgeries(real);
          await publish(w, forged);
          expect(await snapshot(w)).toEqual(before);
          expect(await w.journal.listStreams("payment/")).toEqual(scripts.map((s) => `payment/${s.orderId}`).sort());
          await expectRejectedByAll(w, forged.length);
        }));
    }

    it("a forged early OrderShipped does not displace the real one, which still lands", () =>
      inWorld(open, async (w) => {
        await publish(w, [forgedEarlyShipment("s1")]);
        await produceThroughTransport(w, [script("s1", "paid")]);
        expect(await status(w, "s1")).toBe("completed");
        const order = (await w.runtime.state<OrderState>("order/s1")).state;
        expect(JSON.stringify(order)).toContain("shp_s1");
        const all = await snapshot(w);
        expect(JSON.stringify(all)).not.toContain("FORGED");
        expect(JSON.stringify(all.views)).toContain("shp_s1");
        await expectRejectedByAll(w, 1);
      }));

    it("a forged event of an unknown type takes no version: the real PaymentProcessed keeps version 1 of the timeline", () =>
      inWorld(open, async (w) => {
        const unknown = forged("PaymentMaybe", "payment", "payment:u1:maybe", "u1", { paymentId: "pay_FORGED" });
        await publish(w, [unknown, signedBy("ordering", unknown)]);

        await produceThroughTransport(w, [script("u1", "paid")]);
        expect(await status(w, "u1")).toBe("completed");
        const timeline = await w.journal.getDocument("order-timelines", "u1/payment");
        expect(timeline?.doc).toMatchObject({ entries: [{ type: "PaymentProcessed", aggregateVersion: 1 }] });
        expect(JSON.stringify(await snapshot(w))).not.toContain("FORGED");
        await expectRejectedByAll(w, 2);
      }));
  });
}
