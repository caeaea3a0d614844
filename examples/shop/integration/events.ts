import type { Envelope } from "oncely";
import { InvalidInputError } from "oncely";
import { z } from "zod";
import { orderIdSchema } from "./order-id.js";

/**
 * The shop's integration events: the only way its bounded contexts (ordering, payment, shipping,
 * and the fulfillment process) talk to each other. Every event travels in the oncely envelope
 * `{eventId, type, source, aggregateId, aggregateVersion, occurredAt, correlationId, causationId,
 * payload}` on subject `shop.<source>.<type>` of the JetStream stream `SHOP`.
 *
 * - `aggregateId` is always the order id: every context keys its actor by it.
 * - `aggregateVersion` is the position of the event in its producer's sequence of *published*
 *   events for that order (1, 2, 3, … with no holes), not the producer's stream version: a
 *   producer does not publish every event of its stream, and a sequenced consumer would wait
 *   forever for a version that is never published.
 * - `eventId` is derived from the business fact (`payment:{orderId}:processed`), so a republish
 *   (relay crash, broker redelivery) carries the same id and every inbox drops it.
 * - `occurredAt` is for audit only; no decision reads it.
 */

export const SHOP_STREAM = "SHOP";
export const SHOP_SUBJECT_PREFIX = "shop";
/** What the `SHOP` stream captures. */
export const SHOP_SUBJECTS = [`${SHOP_SUBJECT_PREFIX}.>`];

export const SOURCES = { ordering: "ordering", payment: "payment", shipping: "shipping" } as const;
export type Source = (typeof SOURCES)[keyof typeof SOURCES];
/** Context order used to list a timeline (within one source, aggregateVersion order). */
export const SOURCE_RANK: Readonly<Record<string, number>> = { ordering: 0, payment: 1, shipping: 2 };

const orderId = orderIdSchema;
const lineSchema = z.object({
  sku: z.string().min(1),
  quantity: z.number().int().positive(),
  unitPrice: z.number().int().nonnegative(),
});

export const payloadSchemas = {
  OrderPlaced: z.object({
    orderId,
    currency: z.string().min(1),
    /** Minor units. */
    amount: z.number().int().positive(),
    lines: z.array(lineSchema).min(1),
  }),
  /** The customer cancelled: the fulfillment process starts no shipping, or has Shipping cancel the picklist. */
  OrderCancelled: z.object({ orderId, reason: z.string() }),
  PaymentProcessed: z.object({
    orderId,
    paymentId: z.string().min(1),
    amount: z.number().int(),
    currency: z.string().min(1),
  }),
  PaymentFailed: z.object({ orderId, reason: z.string() }),
  /** The payment's outcome is unknown past its budget: it waits for an operator (reconciliation). */
  PaymentNeedsAttention: z.object({ orderId, error: z.string() }),
  PicklistAccepted: z.object({ orderId, picklistId: z.string().min(1) }),
  OrderShipped: z.object({
    orderId,
    shipmentId: z.string().min(1),
    /** The warehouse webhook's own event id and time (audit; nothing is ordered by the time). */
    warehouseEventId: z.string().min(1),
    shippedAt: z.string().min(1),
    /**
     * The adjustments (lines it cannot ship) the warehouse reported before this shipment, as Shipping
     * recorded them: the order does not call itself completed before it has heard of each. Absent from
     * events published before the field existed.
     */
    adjustmentIds: z.array(z.string().min(1)).optional(),
  }),
  /** The warehouse refused the picklist for good (out of stock): nothing will ship. */
  PicklistRejected: z.object({ orderId, reason: z.string() }),
  /** The warehouse accepted the picklist but cannot ship these lines (one adjustment). */
  LinesUnavailable: z.object({
    orderId,
    adjustmentId: z.string().min(1),
    lines: z.array(z.object({ sku: z.string().min(1), quantity: z.number().int().positive() })).min(1),
  }),
} as const;

export type IntegrationEventType = keyof typeof payloadSchemas;
export type PayloadOf<T extends IntegrationEventType> = z.infer<(typeof payloadSchemas)[T]>;
export const INTEGRATION_EVENT_TYPES = Object.keys(payloadSchemas) as IntegrationEventType[];

/** The producing context of each event type. */
export const SOURCE_OF: Record<IntegrationEventType, Source> = {
  OrderPlaced: "ordering",
  OrderCancelled: "ordering",
  PaymentProcessed: "payment",
  PaymentFailed: "payment",
  PaymentNeedsAttention: "payment",
  PicklistAccepted: "shipping",
  OrderShipped: "shipping",
  PicklistRejected: "shipping",
  LinesUnavailable: "shipping",
};

export const isIntegrationEventType = (type: string): type is IntegrationEventType => type in payloadSchemas;

/**
 * The payload of a known event type, validated. Throws `InvalidInputError` (terminal: the
 * consumer dead-letters the message at once, with the issues) when it does not match, or when
 * `aggregateId` and `payload.orderId` disagree.
 */
export function payloadOf<T extends IntegrationEventType>(envelope: Envelope, type: T): PayloadOf<T> {
  const parsed = payloadSchemas[type].safeParse(envelope.payload);
  if (!parsed.success) {
    throw new InvalidInputError(
      `invalid ${type} payload in event ${envelope.eventId}`,
      parsed.error.issues.map((i) => `payload.${i.path.join(".")}: ${i.message}`),
    );
  }
  const payload = parsed.data as PayloadOf<T>;
  if (payload.orderId !== envelope.aggregateId) {
    throw new InvalidInputError(`event ${envelope.eventId}: aggregateId and payload.orderId differ`, [
      `aggregateId: ${envelope.aggregateId}`,
      `payload.orderId: ${payload.orderId}`,
    ]);
  }
  return payload;
}

/** Stable event ids, one per business fact. */
export const eventIds = {
  orderPlaced: (id: string) => `order:${id}:placed`,
  paymentProcessed: (id: string) => `payment:${id}:processed`,
  paymentFailed: (id: string) => `payment:${id}:failed`,
  paymentNeedsAttention: (id: string) => `payment:${id}:needs-attention`,
  picklistAccepted: (id: string) => `shipment:${id}:picklist-accepted`,
  orderShipped: (id: string) => `shipment:${id}:shipped`,
  orderCancelled: (id: string) => `order:${id}:cancelled`,
  picklistRejected: (id: string) => `shipment:${id}:picklist-rejected`,
  linesUnavailable: (id: string, adjustmentId: string) => `shipment:${id}:lines-unavailable:${adjustmentId}`,
};
