import type { Envelope } from "oncely";
import { defineProcessManager } from "oncely";
import { payloadOf } from "../integration/events.js";
import { orderIdOf } from "../integration/order-id.js";
import { type CancelShipping, type StartShipping, shipmentAddress } from "../shipping/actor.js";

/**
 * The fulfillment process, `fulfillment/{orderId}`: the one place where the causal order
 * "payment processed → start shipping" lives (seed 2), never assumed from arrival order.
 *
 * It needs two facts from two contexts, `OrderPlaced` (the lines) and `PaymentProcessed`, which may
 * arrive in either order, late or twice; it records each as it comes and sends `StartShipping`
 * once both are known, through the outbox (delivery id `order:{id}:start-shipping`, deduplicated
 * by the shipment's inbox). `PaymentFailed` closes the process: nothing will ever ship.
 * `OrderCancelled` closes it too: before shipping was asked for, it never is; after, Shipping is sent
 * `CancelShipping` (delivery id `order:{id}:cancel-shipping`), and the warehouse cancels the
 * picklist unless it already shipped.
 */

export type FulfillmentEvent =
  | { type: "OrderNoted"; lines: { sku: string; quantity: number }[] }
  | { type: "PaymentNoted"; paymentId: string }
  | { type: "PaymentFailureNoted"; reason: string }
  | { type: "ShippingRequested" }
  | { type: "CancellationNoted" }
  | { type: "ShippingCancelRequested" };

export interface FulfillmentState {
  orderId: string;
  lines: { sku: string; quantity: number }[] | null;
  paymentId: string | null;
  failed: boolean;
  shippingRequested: boolean;
  cancelled: boolean;
  cancelRequested: boolean;
}

export const FULFILLMENT_CONSUMES = ["OrderPlaced", "PaymentProcessed", "PaymentFailed", "OrderCancelled"] as const;

export const startShippingId = (orderId: string) => `order:${orderId}:start-shipping`;
export const cancelShippingId = (orderId: string) => `order:${orderId}:cancel-shipping`;

function evolve(state: FulfillmentState, event: FulfillmentEvent): FulfillmentState {
  switch (event.type) {
    case "OrderNoted":
      return state.lines ? state : { ...state, lines: event.lines };
    case "PaymentNoted":
      return state.paymentId ? state : { ...state, paymentId: event.paymentId };
    case "PaymentFailureNoted":
      return { ...state, failed: true };
    case "ShippingRequested":
      return { ...state, shippingRequested: true };
    case "CancellationNoted":
      return { ...state, cancelled: true };
    case "ShippingCancelRequested":
      return { ...state, cancelRequested: true };
  }
}

function noted(state: FulfillmentState, envelope: Envelope): FulfillmentEvent[] {
  switch (envelope.type) {
    case "OrderPlaced": {
      if (state.lines) return [];
      const { lines } = payloadOf(envelope, "OrderPlaced");
      return [{ type: "OrderNoted", lines: lines.map(({ sku, quantity }) => ({ sku, quantity })) }];
    }
    case "PaymentProcessed": {
      if (state.paymentId) return [];
      return [{ type: "PaymentNoted", paymentId: payloadOf(envelope, "PaymentProcessed").paymentId }];
    }
    case "PaymentFailed":
      if (state.failed) return [];
      return [{ type: "PaymentFailureNoted", reason: payloadOf(envelope, "PaymentFailed").reason }];
    case "OrderCancelled":
      if (state.cancelled) return [];
      payloadOf(envelope, "OrderCancelled");
      return [{ type: "CancellationNoted" }];
    default:
      return [];
  }
}

export const fulfillment = defineProcessManager<FulfillmentState, FulfillmentEvent>({
  type: "fulfillment",
  correlate: (envelope) =>
    (FULFILLMENT_CONSUMES as readonly string[]).includes(envelope.type) ? orderIdOf(envelope) : undefined,
  initialState: (orderId) => ({
    orderId,
    lines: null,
    paymentId: null,
    failed: false,
    shippingRequested: false,
    cancelled: false,
    cancelRequested: false,
  }),
  evolve,
  react(state, envelope, context) {
    const events = noted(state, envelope);
    const next = events.reduce(evolve, state);
    if (next.cancelled) {
      // Cancelled before shipping was asked for: it never is. After: Shipping cancels the picklist, once.
      if (!next.shippingRequested || next.cancelRequested) return { events };
      const command: CancelShipping = { type: "CancelShipping", orderId: context.id };
      return {
        events: [...events, { type: "ShippingCancelRequested" }],
        send: [{ to: shipmentAddress(context.id), id: cancelShippingId(context.id), command }],
      };
    }
    // Both facts known, and never asked before: ask once. A payment that both failed and
    // succeeded cannot come from one Payment context (its first final outcome wins); should it
    // happen, the processed payment is what money says, so shipping still starts.
    if (!next.lines || !next.paymentId || next.shippingRequested) return { events };
    const command: StartShipping = { type: "StartShipping", orderId: context.id, lines: next.lines };
    return {
      events: [...events, { type: "ShippingRequested" }],
      // The shipment's first command (a cancel is only ever sent after it): no read of an empty actor.
      send: [{ to: shipmentAddress(context.id), id: startShippingId(context.id), command, expectNew: true }],
    };
  },
});

/** Whether the process has nothing left to do: shipping was asked for (and cancelled if due), or the payment failed. */
export const fulfillmentDone = (state: FulfillmentState) =>
  state.failed || (state.cancelled ? !state.shippingRequested || state.cancelRequested : state.shippingRequested);
