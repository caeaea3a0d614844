/**
 * The effects an order asks for: their kinds (which handler runs them), their stable keys, and
 * the inputs handed to the handlers. Keys come from business identity only, so every retry,
 * replay or recovery of one business action uses the same key.
 */

export const EFFECT_KINDS = { payment: "payment", email: "email", picklist: "picklist" } as const;

/** The order facts backed by an effect, in the order the workflow reaches them. */
export const EFFECT_FACTS = ["payment", "confirmationEmail", "picklist", "shippingEmail"] as const;
export type EffectFact = (typeof EFFECT_FACTS)[number];

const KEY_SUFFIX: Record<EffectFact, string> = {
  payment: "payment",
  confirmationEmail: "confirmation-email",
  picklist: "picklist",
  shippingEmail: "shipping-email",
};

/** `order:{id}:payment`, `order:{id}:confirmation-email`, `order:{id}:picklist`, `order:{id}:shipping-email`. */
export const effectKey = (orderId: string, fact: EffectFact): string => `order:${orderId}:${KEY_SUFFIX[fact]}`;

/** Which fact of order `orderId` a key names, or undefined when the key is not one of this order's. */
export function factOfKey(orderId: string, key: string): EffectFact | undefined {
  return EFFECT_FACTS.find((fact) => effectKey(orderId, fact) === key);
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

export const EMAIL_TEMPLATES = { confirmation: "order-confirmation", shipping: "order-shipped" } as const;
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
