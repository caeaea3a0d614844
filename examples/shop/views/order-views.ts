import type { Envelope, Journal } from "oncely";
import { defineProjection, derived, monotonic } from "oncely";
import { isIntegrationEventType, payloadOf, SOURCE_RANK } from "../integration/events.js";
import { orderIdOf } from "../integration/order-id.js";

/**
 * The order view, a read model built only from integration events (no actor state is read):
 *
 * - `order-views` (facts mode): independent monotonic facts per order — payment
 *   (`NeedsAttention → Processed | Failed`), shipping (`PicklistAccepted → Shipped`) and the ids
 *   that came with them. Every update is commutative (a fact only moves forward, an id is set once),
 *   so any arrival order, duplicate or delay ends in the same document. The status is derived at
 *   query time and never stored.
 * - `order-timelines` (sequenced mode): per producer stream (`source/orderId`) the events in
 *   aggregateVersion order; a version past a gap is parked and released when the gap fills.
 *   One document per producer stream (`{orderId}/{source}`), never one per order: a sequenced
 *   consumer serialises per source stream only, so two sources writing one document at once
 *   would lose an update (the property test found exactly that).
 */

export const paymentFact = monotonic(["NeedsAttention", ["Processed", "Failed"]] as const, "payment");
export type PaymentFact = "NeedsAttention" | "Processed" | "Failed";
export const shippingFact = monotonic(["PicklistAccepted", "Shipped"] as const, "shipping");
export type ShippingFact = "PicklistAccepted" | "Shipped";

export interface OrderFactsDoc {
  orderId: string;
  placed: { currency: string; amount: number; lines: { sku: string; quantity: number; unitPrice: number }[] } | null;
  payment: PaymentFact | null;
  paymentId: string | null;
  paymentFailure: string | null;
  paymentAttention: string | null;
  shipping: ShippingFact | null;
  picklistId: string | null;
  shipmentId: string | null;
}

export type OrderViewStatus = "attention" | "payment_failed" | "shipped" | "paid" | "placed" | "unplaced";

const emptyFacts = (orderId: string): OrderFactsDoc => ({
  orderId,
  placed: null,
  payment: null,
  paymentId: null,
  paymentFailure: null,
  paymentAttention: null,
  shipping: null,
  picklistId: null,
  shipmentId: null,
});

/**
 * Query-time status. `attention`: the payment waits for an operator, or goods shipped for a failed
 * payment. `unplaced`: facts arrived for an order whose OrderPlaced has not (yet) been seen.
 */
export const orderViewStatus = derived<OrderFactsDoc, OrderViewStatus>(
  [
    ["attention", (f) => f.shipping === "Shipped" && f.payment === "Failed"],
    ["attention", (f) => f.payment === "NeedsAttention"],
    ["payment_failed", (f) => f.payment === "Failed"],
    ["shipped", (f) => f.shipping === "Shipped"],
    ["paid", (f) => f.payment === "Processed"],
    ["placed", (f) => f.placed !== null],
  ],
  "unplaced",
);

const setOnce = <T>(current: T | null, next: T): T => (current === null ? next : current);

export const orderFacts = defineProjection<OrderFactsDoc, OrderFactsDoc & { status: OrderViewStatus }>({
  collection: "order-views",
  key: (envelope) => (isIntegrationEventType(envelope.type) ? orderIdOf(envelope) : undefined),
  project(current, envelope, tools) {
    const doc = current ?? emptyFacts(envelope.aggregateId);
    switch (envelope.type) {
      case "OrderPlaced": {
        const { currency, amount, lines } = payloadOf(envelope, "OrderPlaced");
        return doc.placed ? doc : { ...doc, placed: { currency, amount, lines } };
      }
      case "PaymentProcessed": {
        const { paymentId } = payloadOf(envelope, "PaymentProcessed");
        const payment = tools.advance("payment", paymentFact, doc.payment ?? undefined, "Processed").value;
        return { ...doc, payment, paymentId: setOnce(doc.paymentId, paymentId) };
      }
      case "PaymentFailed": {
        const { reason } = payloadOf(envelope, "PaymentFailed");
        const payment = tools.advance("payment", paymentFact, doc.payment ?? undefined, "Failed").value;
        return { ...doc, payment, paymentFailure: setOnce(doc.paymentFailure, reason) };
      }
      case "PaymentNeedsAttention": {
        const { error } = payloadOf(envelope, "PaymentNeedsAttention");
        const payment = tools.advance("payment", paymentFact, doc.payment ?? undefined, "NeedsAttention").value;
        return { ...doc, payment, paymentAttention: setOnce(doc.paymentAttention, error) };
      }
      case "PicklistAccepted": {
        const { picklistId } = payloadOf(envelope, "PicklistAccepted");
        const shipping = tools.advance("shipping", shippingFact, doc.shipping ?? undefined, "PicklistAccepted").value;
        return { ...doc, shipping, picklistId: setOnce(doc.picklistId, picklistId) };
      }
      case "OrderShipped": {
        const { shipmentId } = payloadOf(envelope, "OrderShipped");
        const shipping = tools.advance("shipping", shippingFact, doc.shipping ?? undefined, "Shipped").value;
        return { ...doc, shipping, shipmentId: setOnce(doc.shipmentId, shipmentId) };
      }
      default:
        return undefined;
    }
  },
  view: (doc) => ({ ...doc, status: orderViewStatus(doc) }),
});

export interface TimelineEntry {
  source: string;
  type: string;
  aggregateVersion: number;
  occurredAt: string;
  eventId: string;
}
export interface TimelineDoc {
  orderId: string;
  source: string;
  entries: TimelineEntry[];
}

const timelineId = (orderId: string, source: string) => `${orderId}/${source}`;

/** Sources in context order, then aggregateVersion: a total order that never reads a clock. */
const byPosition = (a: TimelineEntry, b: TimelineEntry) =>
  (SOURCE_RANK[a.source] ?? 99) - (SOURCE_RANK[b.source] ?? 99) ||
  a.source.localeCompare(b.source) ||
  a.aggregateVersion - b.aggregateVersion;

export const orderTimeline = defineProjection<TimelineDoc>({
  collection: "order-timelines",
  key: (envelope) =>
    isIntegrationEventType(envelope.type) ? timelineId(orderIdOf(envelope), envelope.source) : undefined,
  project(current, envelope) {
    const doc = current ?? { orderId: envelope.aggregateId, source: envelope.source, entries: [] };
    const version = envelope.aggregateVersion ?? 0;
    if (doc.entries.some((e) => e.source === envelope.source && e.aggregateVersion === version)) return undefined;
    const entry: TimelineEntry = {
      source: envelope.source,
      type: envelope.type,
      aggregateVersion: version,
      occurredAt: envelope.occurredAt,
      eventId: envelope.eventId,
    };
    return { ...doc, entries: [...doc.entries, entry].sort(byPosition) };
  },
});

/** `GET /order-views/:id`: the facts, the derived status and the timeline, or undefined when nothing is known. */
export async function readOrderView(journal: Journal, orderId: string) {
  const facts = await orderFacts.read(journal, orderId);
  const timeline: TimelineEntry[] = [];
  for (const source of Object.keys(SOURCE_RANK)) {
    timeline.push(...((await orderTimeline.read(journal, timelineId(orderId, source)))?.entries ?? []));
  }
  timeline.sort(byPosition);
  if (!facts && timeline.length === 0) return undefined;
  const { orderId: _id, ...rest } = facts ?? { ...emptyFacts(orderId), status: orderViewStatus(emptyFacts(orderId)) };
  return {
    orderId,
    ...rest,
    timeline: timeline.map(({ source, type, aggregateVersion, occurredAt }) => ({
      source,
      type,
      aggregateVersion,
      occurredAt,
    })),
  };
}

export type OrderViewDocument = NonNullable<Awaited<ReturnType<typeof readOrderView>>>;

/** For the timeline's reconciliation hook: is this one of ours? */
export const isShopEnvelope = (envelope: Envelope) => isIntegrationEventType(envelope.type);
