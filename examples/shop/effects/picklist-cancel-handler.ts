import { lookupMatching, succeeded } from "oncely";
import { z } from "zod";
import { picklistCancelEffect } from "./declarations.js";
import { findRecord, type HttpHandlerOptions, policyOf, runRequest } from "./http.js";

const resultSchema = z.object({ cancelled: z.array(z.string()) }).transform(({ cancelled }) => ({ cancelled }));
const recordSchema = z.object({ status: z.literal("cancelled"), orderId: z.string(), cancelled: z.array(z.string()) });

/**
 * Tells the warehouse to cancel an order's picklists: `POST /picklist-cancellations` with
 * `order:{id}:picklist-cancel` as `Idempotency-Key`. The warehouse refuses (422, a definite
 * failure) when the order already shipped: the shipment won, and the order records it as shipped
 * before the cancel when the webhook arrives.
 *
 * Failure window: between the warehouse cancelling and the commit of `PicklistCancelled`, a crash
 * makes the dispatcher ask again with the same key; the warehouse answers the same.
 *
 * @example
 * const cancel = createPicklistCancelHandler({ baseUrl: warehouse.url });
 */
export function createPicklistCancelHandler(options: HttpHandlerOptions) {
  return picklistCancelEffect.implement({
    policy: policyOf(options),
    run: (input, context) =>
      runRequest(options, "/picklist-cancellations", input, context.idempotencyKey, context.signal, resultSchema),
    lookup: lookupMatching({
      find: (key, { signal }) => findRecord(options, "/picklist-cancellations", key, signal, recordSchema),
      matches: (record, input) => record.orderId === input.orderId,
      outcome: (record) => succeeded({ cancelled: record.cancelled }),
    }),
  });
}
