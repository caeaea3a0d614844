import type { EffectStatus } from "oncely";
import type { OrderLine, RefundCause } from "./events.js";

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

/**
 * A customer mail: the fact of its current attempt. A mail that definitely failed is asked for
 * again under a new key (`attemptKey`), at most `MAX_MAIL_ATTEMPTS` times; each attempt starts
 * at Pending and is monotonic on its own, and outcomes of an earlier attempt's key change nothing.
 */
export interface MailState extends EffectFactState {
  /** The current attempt's key; null until the mail is first asked for. */
  key: string | null;
  /** The current attempt: 0 until asked for, then 1, 2, … */
  attempt: number;
}

export interface ShippingState {
  status: EffectStatus;
  shipmentId: string | null;
  eventId: string | null;
  occurredAt: string | null;
  /**
   * The shortages the warehouse reported before this shipment. Facts arrive in any order, so the
   * shipment may be recorded before a shortage's `LinesUnavailable`: until each of these is known
   * (and refunded), the order is shipped, not completed. Without this, an order could be completed
   * and then go back to shipped when the shortage came: a status rolled back.
   */
  adjustmentIds: string[];
}

export interface OrderDetails {
  customerEmail: string;
  currency: string;
  lines: OrderLine[];
  amount: number;
}

/** One refund: an effect of its own, under its own key (`refundKey`). */
export interface RefundState extends EffectFactState {
  key: string;
  amount: number;
  cause: RefundCause;
}

/** What the warehouse said it cannot ship: the whole picklist, or lines per adjustment. */
export interface StockState {
  /** Why the warehouse refused the picklist for good; null unless it did. */
  rejected: string | null;
  shortages: { adjustmentId: string; lines: { sku: string; quantity: number }[] }[];
}

export interface CancellationState {
  reason: string;
  /** Where the payment stood when the order was cancelled. */
  paymentStatus: EffectStatus;
  /** A shipment was recorded although the order was cancelled (the warehouse shipped first). */
  shippedBeforeCancel: boolean;
}

export interface OrderState {
  orderId: string;
  /** Null until OrderPlaced; a shipment may be recorded before it (out-of-order webhook). */
  details: OrderDetails | null;
  payment: EffectFactState;
  confirmationEmail: MailState;
  picklist: EffectFactState;
  shipping: ShippingState;
  shippingEmail: MailState;
  /** Null until cancelled (`cancellation.ts`). */
  cancellation: CancellationState | null;
  stock: StockState;
  /** Every refund asked for, in order (`refunds.ts`). */
  refunds: RefundState[];
  cancellationEmail: MailState;
  stockEmail: MailState;
}

export const notRequested = (): EffectFactState => ({
  status: "NotRequested",
  resultId: null,
  reason: null,
  lastError: null,
  needsReconciliation: false,
});

export const mailNotRequested = (): MailState => ({ ...notRequested(), key: null, attempt: 0 });

export const initialOrderState = (orderId: string): OrderState => ({
  orderId,
  details: null,
  payment: notRequested(),
  confirmationEmail: mailNotRequested(),
  picklist: notRequested(),
  shipping: { status: "NotRequested", shipmentId: null, eventId: null, occurredAt: null, adjustmentIds: [] },
  shippingEmail: mailNotRequested(),
  cancellation: null,
  stock: { rejected: null, shortages: [] },
  refunds: [],
  cancellationEmail: mailNotRequested(),
  stockEmail: mailNotRequested(),
});
