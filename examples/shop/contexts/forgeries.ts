import type { Envelope } from "oncely";
import { eventIds } from "../integration/events.js";

/**
 * Integration events as an attacker would publish them (unsigned; tests sign some with a wrong
 * key), each under the real `eventId` of the fact it pretends, with a well-formed payload, so that
 * only authenticity can stop it.
 */
export const forged = (type: string, source: string, eventId: string, orderId: string, payload: object): Envelope => ({
  eventId,
  type,
  source,
  aggregateId: orderId,
  aggregateVersion: 1,
  occurredAt: "2026-01-01T00:00:00.000Z",
  correlationId: orderId,
  causationId: "attacker",
  payload: { orderId, ...payload },
});

/** An order nobody placed: payment must not charge it. */
export const forgedOrderPlaced = (orderId: string): Envelope =>
  forged("OrderPlaced", "ordering", eventIds.orderPlaced(orderId), orderId, {
    currency: "EUR",
    amount: 9900,
    lines: [{ sku: "book", quantity: 1, unitPrice: 9900 }],
  });

export const forgedPaymentProcessed = (orderId: string): Envelope =>
  forged("PaymentProcessed", "payment", eventIds.paymentProcessed(orderId), orderId, {
    paymentId: "pay_FORGED",
    amount: 1250,
    currency: "EUR",
  });

export const forgedPaymentFailed = (orderId: string): Envelope =>
  forged("PaymentFailed", "payment", eventIds.paymentFailed(orderId), orderId, { reason: "forged" });

/** Before the warehouse shipped: must not be recorded, nor make the real one a duplicate. */
export const forgedEarlyShipment = (orderId: string): Envelope => ({
  ...forged("OrderShipped", "shipping", eventIds.orderShipped(orderId), orderId, {
    shipmentId: "shp_FORGED",
    warehouseEventId: "wh-forged",
    shippedAt: "2026-01-01T00:00:00.000Z",
  }),
  aggregateVersion: 2,
});
