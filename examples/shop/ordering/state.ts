import type { EffectStatus } from "../../../src/effects/types.js";
import type { OrderLine } from "./events.js";

/**
 * The order's state: independent facts, each monotonic, and nothing else. No summary status is
 * stored: `deriveStatus` (status.ts) computes it from the facts, so no event handler can
 * assign a status that contradicts them.
 */

export interface EffectFactState {
  status: EffectStatus;
  /** The provider's id for the done effect (paymentId, messageId, picklistId); null until Completed. */
  resultId: string | null;
  /** Why it definitely failed; null unless Failed. */
  reason: string | null;
  /** The last ambiguous error while Unknown. */
  lastError: string | null;
  /** True while the effect waits for an operator in the reconciliation queue. */
  needsReconciliation: boolean;
}

export interface ShippingState {
  status: EffectStatus;
  shipmentId: string | null;
  eventId: string | null;
  occurredAt: string | null;
}

export interface OrderDetails {
  customerEmail: string;
  currency: string;
  lines: OrderLine[];
  amount: number;
}

export interface OrderState {
  orderId: string;
  /** Null until OrderPlaced; a shipment may be recorded before it (out-of-order webhook). */
  details: OrderDetails | null;
  payment: EffectFactState;
  confirmationEmail: EffectFactState;
  picklist: EffectFactState;
  shipping: ShippingState;
  shippingEmail: EffectFactState;
}

export const notRequested = (): EffectFactState => ({
  status: "NotRequested",
  resultId: null,
  reason: null,
  lastError: null,
  needsReconciliation: false,
});

export const initialOrderState = (orderId: string): OrderState => ({
  orderId,
  details: null,
  payment: notRequested(),
  confirmationEmail: notRequested(),
  picklist: notRequested(),
  shipping: { status: "NotRequested", shipmentId: null, eventId: null, occurredAt: null },
  shippingEmail: notRequested(),
});
