import type { PublishRequest } from "oncely";
import { CommandRejectedError } from "oncely";
import { z } from "zod";
import { eventIds, type PayloadOf, SOURCES } from "../integration/events.js";
import type { OrderEvent } from "./events.js";
import type { OrderState } from "./state.js";

/**
 * Cancellation, decided by the order from its own state, here and nowhere else. The races it settles:
 *
 * - before payment (payment Pending or Unknown): the order is cancelled; a charge that still
 *   completes is answered by a refund (`refunds.ts`), a charge that fails by nothing;
 * - after payment, before shipment: cancelled; the refund `order:{id}:refund` and the cancellation
 *   mail are asked for in the same commit, and `OrderCancelled` is published (outbox, same commit)
 *   so that the fulfillment process never starts shipping, or has Shipping cancel the picklist;
 * - after shipment: refused (409), nothing recorded: the shipment won;
 * - a shipment that arrives after the cancellation was recorded (the warehouse had already shipped)
 *   is recorded with `ShippedBeforeCancel`: the cancellation's refund stands, and this is the only
 *   way an order ends both shipped and refunded.
 *
 * Whichever of the two the order's state holds first wins, because the order handles one command
 * at a time and decides on its current state.
 */

export const cancelOrderSchema = z.strictObject({
  type: z.literal("CancelOrder"),
  reason: z.string().trim().min(1, "must not be empty").max(500, "must be at most 500 characters"),
});
export type CancelOrder = z.infer<typeof cancelOrderSchema>;

/** The cancellation came too late: the order shipped. Answered 409 with this message. */
export class CancellationRefusedError extends CommandRejectedError {
  constructor(
    readonly orderId: string,
    readonly shipmentId: string | null,
  ) {
    super(`order ${orderId} has already shipped (shipment ${shipmentId ?? "unknown"}) and can no longer be cancelled`);
    this.name = "CancellationRefusedError";
  }
}

/**
 * The events and the integration event of a cancellation, or undefined when the order is already
 * cancelled (a second cancel under another key: answered with the state, nothing new). Throws when
 * the order was never placed or has shipped.
 */
export function cancel(
  command: CancelOrder,
  state: OrderState,
  orderId: string,
): { events: OrderEvent[]; publish: PublishRequest[] } | undefined {
  if (!state.details) throw new CommandRejectedError(`order ${orderId} was never placed`);
  if (state.cancellation) return undefined;
  if (state.shipping.status === "Completed") throw new CancellationRefusedError(orderId, state.shipping.shipmentId);
  const payload: PayloadOf<"OrderCancelled"> = { orderId, reason: command.reason };
  return {
    events: [{ type: "OrderCancelled", reason: command.reason, paymentStatus: state.payment.status }],
    publish: [
      {
        eventId: eventIds.orderCancelled(orderId),
        type: "OrderCancelled",
        source: SOURCES.ordering,
        aggregateId: orderId,
        payload,
      },
    ],
  };
}

/** What a shipment recorded on a cancelled order adds: the trail says the warehouse shipped first. */
export function shipmentAfterCancel(state: OrderState, shipmentId: string): OrderEvent[] {
  return state.cancellation && !state.cancellation.shippedBeforeCancel
    ? [{ type: "ShippedBeforeCancel", shipmentId }]
    : [];
}
