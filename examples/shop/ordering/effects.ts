/**
 * The effects an order asks for: their kinds (which handler runs them), their stable keys, and
 * the inputs handed to the handlers. Keys come from business identity only, so every retry,
 * replay or recovery of one business action uses the same key; only a new attempt after a
 * definite failure takes a new one (`attemptKey`).
 */

export const EFFECT_KINDS = {
  payment: "payment",
  email: "email",
  picklist: "picklist",
  refund: "refund",
  picklistCancel: "picklist-cancel",
  shipmentCheck: "shipment-check",
} as const;

/** The order facts backed by an effect, in the order the workflow reaches them. */
export const EFFECT_FACTS = [
  "payment",
  "confirmationEmail",
  "picklist",
  "shippingEmail",
  "cancellationEmail",
  "stockEmail",
] as const;
export type EffectFact = (typeof EFFECT_FACTS)[number];

const KEY_SUFFIX: Record<EffectFact, string> = {
  payment: "payment",
  confirmationEmail: "confirmation-email",
  picklist: "picklist",
  shippingEmail: "shipping-email",
  cancellationEmail: "cancellation-email",
  stockEmail: "stock-email",
};

/** `order:{id}:payment`, `order:{id}:confirmation-email`, `order:{id}:picklist`, `order:{id}:shipping-email`. */
export const effectKey = (orderId: string, fact: EffectFact): string => `order:${orderId}:${KEY_SUFFIX[fact]}`;

/**
 * The key of attempt `attempt` of an effect: attempt 1 keeps `effectKey`, a later one is
 * `{effectKey}:{attempt}` (`order:{id}:picklist:2`, `order:{id}:confirmation-email:3`). A new
 * attempt is only ever asked for after the previous one definitely failed, so it must be a new
 * key: reusing the old one would get the provider's stored refusal back (or, for a key the
 * provider never saw, risk a second execution of something an operator settled as not done).
 */
export const attemptKey = (orderId: string, fact: EffectFact, attempt: number): string =>
  attempt <= 1 ? effectKey(orderId, fact) : `${effectKey(orderId, fact)}:${attempt}`;

/** Attempts of one customer mail; after the last one definitely failed, it is left to an operator. */
export const MAX_MAIL_ATTEMPTS = 3;

/**
 * Which fact of order `orderId`, and which attempt, a key names (the inverse of `attemptKey`, for
 * its canonical spelling only), or undefined when the key is not one of this order's.
 */
export function effectOfKey(orderId: string, key: string): { fact: EffectFact; attempt: number } | undefined {
  for (const fact of EFFECT_FACTS) {
    const base = effectKey(orderId, fact);
    if (key === base) return { fact, attempt: 1 };
    if (!key.startsWith(`${base}:`)) continue;
    const attempt = Number(key.slice(base.length + 1));
    if (Number.isSafeInteger(attempt) && attempt >= 2 && attemptKey(orderId, fact, attempt) === key) {
      return { fact, attempt };
    }
  }
  return undefined;
}

export interface PaymentInput {
  orderId: string;
  /** Minor units (cents). */
  amount: number;
  currency: string;
}
export interface PaymentResult {
  paymentId: string;
}

export const EMAIL_TEMPLATES = {
  confirmation: "order-confirmation",
  shipping: "order-shipped",
  cancellation: "order-cancelled",
  stock: "order-out-of-stock",
} as const;
export interface EmailInput {
  to: string;
  template: string;
  orderId: string;
}
export interface EmailResult {
  messageId: string;
}

export interface PicklistInput {
  orderId: string;
  lines: { sku: string; quantity: number }[];
}
export interface PicklistResult {
  picklistId: string;
}

export interface RefundInput {
  /** The payment provider's id of the charge to refund. */
  paymentId: string;
  /** Minor units; never more than what is left of the charge (the order decides it). */
  amount: number;
}
export interface RefundResult {
  refundId: string;
}

export interface PicklistCancelInput {
  orderId: string;
}
export interface PicklistCancelResult {
  /** The picklists the warehouse cancelled (none when it had none yet: any later one is refused). */
  cancelled: string[];
}

/** Asks the warehouse what became of the picklist sent under `picklistKey` (its webhook is overdue). */
export interface ShipmentCheckInput {
  orderId: string;
  picklistKey: string;
}
/** The warehouse's `OrderShipped`, as its webhook carries it (the same ids, the same time). */
export interface CheckedShipment {
  eventId: string;
  shipmentId: string;
  occurredAt: string;
}
/** The warehouse's `LinesUnavailable` (one adjustment), as its webhook carries it. */
export interface CheckedAdjustment {
  eventId: string;
  adjustmentId: string;
  lines: { sku: string; quantity: number }[];
}
export type ShipmentCheckResult =
  /** Not shipped yet: ask again later. */
  | { status: "accepted" }
  /** The order was cancelled at the warehouse before it shipped: nothing will ship. */
  | { status: "cancelled" }
  | { status: "shipped"; shipment: CheckedShipment; adjustments: CheckedAdjustment[] };
