import type { EffectStatus } from "oncely";
import type { EffectFact } from "./effects.js";

/**
 * Everything that can happen to an order, as facts, in the stream `order/{id}`:
 * - `OrderPlaced`, from the shop's API;
 * - one event per integration fact Ordering hears of (`PaymentProcessed`, `PaymentFailed`,
 *   `PaymentNeedsAttention`, `PicklistAccepted`, `OrderShipped`), each carrying the integration
 *   event's id;
 * - the five events of each of the order's own effects: the customer mails and the refunds;
 * - `OrderCancelled` from the shop's API, `ShippedBeforeCancel` when a shipment beat it
 *   (`cancellation.ts`), and the stock facts Shipping reports (`PicklistRejected`,
 *   `LinesUnavailable`), each answered by a refund (`refunds.ts`).
 *
 * `FACT_EVENTS` names the five events (requested, done, failed, unknown, needs reconciliation) of
 * every effect of the shop, so the audit and the views can treat them alike: the payment's live in
 * `payment/{id}`, the picklist's in `shipment/{id}`, the mails' here (`FACT_STREAM`).
 */

export interface OrderLine {
  sku: string;
  quantity: number;
  /** Minor units per item. */
  unitPrice: number;
}

/** How an outcome was learned: from the run, from a lookup by key, or from an operator. */
export type Via = "run" | "lookup" | "operator";

export interface OrderPlaced {
  type: "OrderPlaced";
  orderId: string;
  customerEmail: string;
  currency: string;
  lines: OrderLine[];
  /** Minor units: the sum of quantity × unitPrice. */
  amount: number;
}
export interface OrderShipped {
  type: "OrderShipped";
  /** The warehouse webhook's event id (Shipping passes it on in OrderShipped): the first one recorded wins. */
  eventId: string;
  shipmentId: string;
  /** The warehouse's clock: kept for audit only, never used to order anything. */
  occurredAt: string;
  /** Shortages reported before the shipment (see `ShippingState.adjustmentIds`); absent when none. */
  adjustmentIds?: string[];
}
/** Payment reported the charge (integration event `PaymentProcessed`). */
export interface PaymentProcessed {
  type: "PaymentProcessed";
  eventId: string;
  paymentId: string;
}
/** Payment reported a definite failure (integration event `PaymentFailed`). */
export interface PaymentFailedFact {
  type: "PaymentFailed";
  eventId: string;
  reason: string;
}
/** Payment's outcome is unknown past its budget and waits for an operator (`PaymentNeedsAttention`). */
export interface PaymentNeedsAttention {
  type: "PaymentNeedsAttention";
  eventId: string;
  error: string;
}
/** The warehouse accepted the picklist (integration event `PicklistAccepted`). */
export interface PicklistAcceptedFact {
  type: "PicklistAccepted";
  eventId: string;
  picklistId: string;
}

/** The customer cancelled; `paymentStatus` is where the payment stood, so the trail shows which stage won. */
export interface OrderCancelled {
  type: "OrderCancelled";
  reason: string;
  paymentStatus: EffectStatus;
}
/**
 * The warehouse shipped an order after (or while) it was cancelled: the shipment is recorded, and the
 * cancellation's refund stands. The only way an order is both shipped and refunded.
 */
export interface ShippedBeforeCancel {
  type: "ShippedBeforeCancel";
  shipmentId: string;
}
/** Shipping gave up on the picklist: the warehouse refused it for good (out of stock). */
export interface PicklistRejectedFact {
  type: "PicklistRejected";
  eventId: string;
  reason: string;
}
/** The warehouse accepted the picklist but cannot ship these lines; one adjustment, one partial refund. */
export interface LinesUnavailableFact {
  type: "LinesUnavailable";
  eventId: string;
  adjustmentId: string;
  lines: { sku: string; quantity: number }[];
}

/** Why a refund was asked for: the whole order (cancelled, or refused by the warehouse) or some lines. */
export type RefundCause = "cancelled" | "out-of-stock" | "lines-unavailable";
export interface RefundRequested {
  type: "RefundRequested";
  key: string;
  paymentId: string;
  amount: number;
  cause: RefundCause;
}
export type RefundCompleted = { type: "RefundCompleted"; key: string; refundId: string; via: Via };

interface Requested<T extends string> {
  type: T;
  key: string;
}
interface Failed<T extends string> {
  type: T;
  key: string;
  reason: string;
  via: Via;
}
interface Unknown<T extends string> {
  type: T;
  key: string;
  error: string;
  attempt: number;
}
interface NeedsReconciliation<T extends string> {
  type: T;
  key: string;
  error: string;
}

/**
 * A mail asked for: `attempt` is absent for the first attempt (every event written before mails
 * were asked for again has none, and means attempt 1) and set from 2 on, with `key` its attempt's key.
 * Not to be confused with `attempt` on an `…Unknown` event: that one counts the dispatcher's runs
 * of one key.
 */
type MailRequested<T extends string> = Requested<T> & { to: string; attempt?: number };
export type ConfirmationEmailRequested = MailRequested<"ConfirmationEmailRequested">;
export type ConfirmationEmailSent = { type: "ConfirmationEmailSent"; key: string; messageId: string; via: Via };
export type ShippingEmailRequested = MailRequested<"ShippingEmailRequested">;
export type ShippingEmailSent = { type: "ShippingEmailSent"; key: string; messageId: string; via: Via };

export type CancellationEmailRequested = MailRequested<"CancellationEmailRequested">;
export type StockEmailRequested = MailRequested<"StockEmailRequested">;
type MailSent<T extends string> = { type: T; key: string; messageId: string; via: Via };

export type OrderEvent =
  | OrderPlaced
  | OrderCancelled
  | ShippedBeforeCancel
  | PicklistRejectedFact
  | LinesUnavailableFact
  | RefundRequested
  | RefundCompleted
  | Failed<"RefundFailed">
  | Unknown<"RefundUnknown">
  | NeedsReconciliation<"RefundNeedsReconciliation">
  | CancellationEmailRequested
  | MailSent<"CancellationEmailSent">
  | Failed<"CancellationEmailFailed">
  | Unknown<"CancellationEmailUnknown">
  | NeedsReconciliation<"CancellationEmailNeedsReconciliation">
  | StockEmailRequested
  | MailSent<"StockEmailSent">
  | Failed<"StockEmailFailed">
  | Unknown<"StockEmailUnknown">
  | NeedsReconciliation<"StockEmailNeedsReconciliation">
  | OrderShipped
  | PaymentProcessed
  | PaymentFailedFact
  | PaymentNeedsAttention
  | PicklistAcceptedFact
  | ConfirmationEmailRequested
  | ConfirmationEmailSent
  | Failed<"ConfirmationEmailFailed">
  | Unknown<"ConfirmationEmailUnknown">
  | NeedsReconciliation<"ConfirmationEmailNeedsReconciliation">
  | ShippingEmailRequested
  | ShippingEmailSent
  | Failed<"ShippingEmailFailed">
  | Unknown<"ShippingEmailUnknown">
  | NeedsReconciliation<"ShippingEmailNeedsReconciliation">;

export type OrderEventType = OrderEvent["type"];

/** Effect events of the payment and picklist effects (in `payment/{id}` and `shipment/{id}`), for FACT_EVENTS. */
export type PaymentRequested = Requested<"PaymentRequested"> & { amount: number; currency: string };
export type PaymentCompleted = { type: "PaymentCompleted"; key: string; paymentId: string; via: Via };
export type PicklistRequested = Requested<"PicklistRequested">;
export type PicklistAccepted = { type: "PicklistAccepted"; key: string; picklistId: string; via: Via };
type EffectEventType =
  | OrderEventType
  | "PaymentRequested"
  | "PaymentCompleted"
  | "PaymentUnknown"
  | "PaymentNeedsReconciliation"
  | "PicklistRequested"
  | "PicklistRejected"
  | "PicklistUnknown"
  | "PicklistNeedsReconciliation";

/** The stream type that holds each effect's events. */
export const FACT_STREAM: Record<EffectFact, "order" | "payment" | "shipment"> = {
  payment: "payment",
  confirmationEmail: "order",
  picklist: "shipment",
  shippingEmail: "order",
  cancellationEmail: "order",
  stockEmail: "order",
};

/** The order's own mails (its refunds are per key: `refunds.ts`). */
export const ORDER_EFFECT_FACTS = ["confirmationEmail", "shippingEmail", "cancellationEmail", "stockEmail"] as const;
export type OrderEffectFact = (typeof ORDER_EFFECT_FACTS)[number];

/** The five event types of each effect, and the field of its completed event that holds the result id. */
export const FACT_EVENTS = {
  payment: {
    requested: "PaymentRequested",
    completed: "PaymentCompleted",
    failed: "PaymentFailed",
    unknown: "PaymentUnknown",
    reconcile: "PaymentNeedsReconciliation",
    resultField: "paymentId",
  },
  confirmationEmail: {
    requested: "ConfirmationEmailRequested",
    completed: "ConfirmationEmailSent",
    failed: "ConfirmationEmailFailed",
    unknown: "ConfirmationEmailUnknown",
    reconcile: "ConfirmationEmailNeedsReconciliation",
    resultField: "messageId",
  },
  picklist: {
    requested: "PicklistRequested",
    completed: "PicklistAccepted",
    failed: "PicklistRejected",
    unknown: "PicklistUnknown",
    reconcile: "PicklistNeedsReconciliation",
    resultField: "picklistId",
  },
  shippingEmail: {
    requested: "ShippingEmailRequested",
    completed: "ShippingEmailSent",
    failed: "ShippingEmailFailed",
    unknown: "ShippingEmailUnknown",
    reconcile: "ShippingEmailNeedsReconciliation",
    resultField: "messageId",
  },
  cancellationEmail: {
    requested: "CancellationEmailRequested",
    completed: "CancellationEmailSent",
    failed: "CancellationEmailFailed",
    unknown: "CancellationEmailUnknown",
    reconcile: "CancellationEmailNeedsReconciliation",
    resultField: "messageId",
  },
  stockEmail: {
    requested: "StockEmailRequested",
    completed: "StockEmailSent",
    failed: "StockEmailFailed",
    unknown: "StockEmailUnknown",
    reconcile: "StockEmailNeedsReconciliation",
    resultField: "messageId",
  },
} as const satisfies Record<
  EffectFact,
  {
    requested: EffectEventType;
    completed: EffectEventType;
    failed: EffectEventType;
    unknown: EffectEventType;
    reconcile: EffectEventType;
    resultField: string;
  }
>;

export type Stage = "requested" | "completed" | "failed" | "unknown" | "reconcile";

/**
 * Which effect and which stage an event type stands for, read together with the stream it is in
 * (`FACT_STREAM`): `PaymentFailed` in `payment/{id}` is the effect's failure, in `order/{id}` the
 * integration fact Ordering recorded.
 */
export const EVENT_STAGE: ReadonlyMap<string, { fact: EffectFact; stage: Stage }> = new Map(
  (Object.keys(FACT_EVENTS) as EffectFact[]).flatMap((fact) =>
    (["requested", "completed", "failed", "unknown", "reconcile"] as const).map(
      (stage) => [FACT_EVENTS[fact][stage] as string, { fact, stage }] as const,
    ),
  ),
);
