import type { CommandHandler } from "oncely";
import { payloadOf } from "../integration/events.js";
import { orderIdOf } from "../integration/order-id.js";

/**
 * What Ordering hears from the other contexts. Each integration event becomes a command to
 * `order/{orderId}` carrying its eventId; the consumer sends it with messageId = eventId, so the
 * order's inbox (committed with its events) drops any redelivery. Each command updates one
 * independent, monotonic fact; none assigns a status.
 */
export type IntegrationCommand =
  | { type: "RecordPaymentProcessed"; eventId: string; paymentId: string }
  | { type: "RecordPaymentFailed"; eventId: string; reason: string }
  | { type: "RecordPaymentNeedsAttention"; eventId: string; error: string }
  | { type: "RecordPicklistAccepted"; eventId: string; picklistId: string }
  | { type: "RecordPicklistRejected"; eventId: string; reason: string }
  | {
      type: "RecordLinesUnavailable";
      eventId: string;
      adjustmentId: string;
      lines: { sku: string; quantity: number }[];
    }
  | {
      type: "RecordOrderShipped";
      eventId: string;
      shipmentId: string;
      /** The warehouse's webhook event id and time, as Shipping recorded them. */
      warehouseEventId: string;
      shippedAt: string;
      /** The shortages Shipping recorded before the shipment (their `LinesUnavailable` may come later); absent: none. */
      adjustmentIds?: string[];
    };

export const INTEGRATION_COMMAND_TYPES = [
  "RecordPaymentProcessed",
  "RecordPaymentFailed",
  "RecordPaymentNeedsAttention",
  "RecordPicklistAccepted",
  "RecordPicklistRejected",
  "RecordLinesUnavailable",
  "RecordOrderShipped",
] as const;

export const ORDERING_CONSUMES = [
  "PaymentProcessed",
  "PaymentFailed",
  "PaymentNeedsAttention",
  "PicklistAccepted",
  "PicklistRejected",
  "LinesUnavailable",
  "OrderShipped",
] as const;

export const orderingRoute: CommandHandler = {
  kind: "command",
  route(envelope) {
    const address = `order/${orderIdOf(envelope)}`;
    const eventId = envelope.eventId;
    switch (envelope.type) {
      case "PaymentProcessed": {
        const { paymentId } = payloadOf(envelope, "PaymentProcessed");
        return { address, command: { type: "RecordPaymentProcessed", eventId, paymentId } };
      }
      case "PaymentFailed": {
        const { reason } = payloadOf(envelope, "PaymentFailed");
        return { address, command: { type: "RecordPaymentFailed", eventId, reason } };
      }
      case "PaymentNeedsAttention": {
        const { error } = payloadOf(envelope, "PaymentNeedsAttention");
        return { address, command: { type: "RecordPaymentNeedsAttention", eventId, error } };
      }
      case "PicklistAccepted": {
        const { picklistId } = payloadOf(envelope, "PicklistAccepted");
        return { address, command: { type: "RecordPicklistAccepted", eventId, picklistId } };
      }
      case "PicklistRejected": {
        const { reason } = payloadOf(envelope, "PicklistRejected");
        return { address, command: { type: "RecordPicklistRejected", eventId, reason } };
      }
      case "LinesUnavailable": {
        const { adjustmentId, lines } = payloadOf(envelope, "LinesUnavailable");
        return { address, command: { type: "RecordLinesUnavailable", eventId, adjustmentId, lines } };
      }
      case "OrderShipped": {
        const { shipmentId, warehouseEventId, shippedAt, adjustmentIds } = payloadOf(envelope, "OrderShipped");
        return {
          address,
          command: {
            type: "RecordOrderShipped",
            eventId,
            shipmentId,
            warehouseEventId,
            shippedAt,
            adjustmentIds: adjustmentIds ?? [],
          },
        };
      }
      default:
        return undefined;
    }
  },
};
