import { errors, failed, lookupMatching, succeeded } from "oncely";
import { z } from "zod";
import type { ShipmentCheckInput, ShipmentCheckResult } from "../ordering/effects.js";
import { shipmentCheckEffect } from "./declarations.js";
import { findRecord, type HttpHandlerOptions, policyOf } from "./http.js";

const line = z.object({ sku: z.string(), quantity: z.number() });
const recordSchema = z.discriminatedUnion("status", [
  z.object({ status: z.literal("accepted"), orderId: z.string() }),
  z.object({ status: z.literal("cancelled"), orderId: z.string() }),
  z.object({
    status: z.literal("shipped"),
    orderId: z.string(),
    shipment: z.object({ eventId: z.string(), shipmentId: z.string(), occurredAt: z.string() }),
    adjustments: z.array(z.object({ eventId: z.string(), adjustmentId: z.string(), lines: z.array(line) })),
  }),
]);
type ShipmentRecord = z.infer<typeof recordSchema>;

/**
 * Asks the warehouse what became of an order's picklist when its shipment webhook is overdue:
 * `GET /shipments?idempotencyKey={picklistKey}`. The answer carries the webhook's own event id,
 * shipment id and time, so the shipment records it exactly as the webhook would have, and the
 * webhook arriving after all is a duplicate. 404 (the warehouse has no record of the picklist) is
 * a definite failure: nobody can tell the order it shipped, so its shipment deadline decides.
 * A record of another order under the key is never taken for this one's.
 *
 * A read changes nothing at the warehouse, so it is safe to ask again under the same key after a
 * timeout or a 5xx (`providerDedups`); `lookup` is the same question, answering `not-found` on 404.
 *
 * @example
 * const check = createShipmentCheckHandler({ baseUrl: warehouse.url });
 */
export function createShipmentCheckHandler(options: HttpHandlerOptions) {
  const find = (input: ShipmentCheckInput, signal: AbortSignal) =>
    findRecord(options, "/shipments", input.picklistKey, signal, recordSchema);
  return shipmentCheckEffect.implement({
    // A read: asking again under the same key is always safe, whatever the shop's other providers do.
    policy: { ...policyOf(options), providerDedups: true },
    run: async (input, context) => {
      const record = await find(input, context.signal);
      if (record === undefined) return failed(`the warehouse has no picklist under "${input.picklistKey}"`);
      // Another order's picklist under this key: something is badly wrong, an operator decides.
      if (record.orderId !== input.orderId) throw new errors.IdempotencyKeyReusedError(context.idempotencyKey);
      return succeeded(resultOf(record));
    },
    lookup: lookupMatching({
      find: (_key, { signal, input }) => find(input, signal),
      matches: (record, input) => record.orderId === input.orderId,
      outcome: (record) => succeeded(resultOf(record)),
    }),
  });
}

function resultOf(record: ShipmentRecord): ShipmentCheckResult {
  if (record.status !== "shipped") return { status: record.status };
  const { eventId, shipmentId, occurredAt } = record.shipment;
  return {
    status: "shipped",
    shipment: { eventId, shipmentId, occurredAt },
    adjustments: record.adjustments.map(({ eventId, adjustmentId, lines }) => ({
      eventId,
      adjustmentId,
      lines: lines.map(({ sku, quantity }) => ({ sku, quantity })),
    })),
  };
}
