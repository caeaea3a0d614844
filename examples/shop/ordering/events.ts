import type { EffectFact } from "./effects.js";

/**
 * Everything that can happen to an order, as facts. Every effect has the same five events
 * (requested, done, failed, unknown, needs reconciliation); `FACT_EVENTS` names them per effect
 * so the decider and evolve can treat the four effects alike.
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
  /** The warehouse webhook's event id: the first one recorded wins. */
  eventId: string;
  shipmentId: string;
  /** The warehouse's clock: kept for audit only, never used to order anything. */
  occurredAt: string;
}

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

export type PaymentRequested = Requested<"PaymentRequested"> & { amount: number; currency: string };
export type PaymentCompleted = { type: "PaymentCompleted"; key: string; paymentId: string; via: Via };
export type ConfirmationEmailRequested = Requested<"ConfirmationEmailRequested"> & { to: string };
export type ConfirmationEmailSent = { type: "ConfirmationEmailSent"; key: string; messageId: string; via: Via };
export type PicklistRequested = Requested<"PicklistRequested">;
export type PicklistAccepted = { type: "PicklistAccepted"; key: string; picklistId: string; via: Via };
export type ShippingEmailRequested = Requested<"ShippingEmailRequested"> & { to: string };
export type ShippingEmailSent = { type: "ShippingEmailSent"; key: string; messageId: string; via: Via };

export type OrderEvent =
  | OrderPlaced
  | OrderShipped
  | PaymentRequested
  | PaymentCompleted
  | Failed<"PaymentFailed">
  | Unknown<"PaymentUnknown">
  | NeedsReconciliation<"PaymentNeedsReconciliation">
  | ConfirmationEmailRequested
  | ConfirmationEmailSent
  | Failed<"ConfirmationEmailFailed">
  | Unknown<"ConfirmationEmailUnknown">
  | NeedsReconciliation<"ConfirmationEmailNeedsReconciliation">
  | PicklistRequested
  | PicklistAccepted
  | Failed<"PicklistRejected">
  | Unknown<"PicklistUnknown">
  | NeedsReconciliation<"PicklistNeedsReconciliation">
  | ShippingEmailRequested
  | ShippingEmailSent
  | Failed<"ShippingEmailFailed">
  | Unknown<"ShippingEmailUnknown">
  | NeedsReconciliation<"ShippingEmailNeedsReconciliation">;

export type OrderEventType = OrderEvent["type"];

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
} as const satisfies Record<
  EffectFact,
  {
    requested: OrderEventType;
    completed: OrderEventType;
    failed: OrderEventType;
    unknown: OrderEventType;
    reconcile: OrderEventType;
    resultField: string;
  }
>;

export type Stage = "requested" | "completed" | "failed" | "unknown" | "reconcile";

/** Which effect and which stage an event type stands for (undefined for OrderPlaced/OrderShipped). */
export const EVENT_STAGE: ReadonlyMap<string, { fact: EffectFact; stage: Stage }> = new Map(
  (Object.keys(FACT_EVENTS) as EffectFact[]).flatMap((fact) =>
    (["requested", "completed", "failed", "unknown", "reconcile"] as const).map(
      (stage) => [FACT_EVENTS[fact][stage] as string, { fact, stage }] as const,
    ),
  ),
);
