import { lookupMatching, succeeded } from "oncely";
import { z } from "zod";

import { picklistEffect } from "./declarations.js";
import { findRecord, type HttpHandlerOptions, policyOf, runRequest, sameRequest } from "./http.js";

const resultSchema = z.object({ picklistId: z.string().min(1) }).transform(({ picklistId }) => ({ picklistId }));
const recordSchema = z.object({
  picklistId: z.string().min(1),
  status: z.enum(["accepted", "shipped"]),
  orderId: z.string(),
  lines: z.array(z.object({ sku: z.string(), quantity: z.number() })),
});

/**
 * Sends the picklist to the warehouse: `POST /picklists` with `order:{id}:picklist` as
 * `Idempotency-Key`. Succeeds with the `picklistId` once the warehouse accepted it; shipping is
 * reported later and separately, through the warehouse's webhook.
 *
 * Failure window: between the warehouse accepting the picklist and the commit of
 * `PicklistAccepted`, a crash makes the dispatcher send it again with the same key; the warehouse
 * answers the same `picklistId` and ships once.
 *
 * @example
 * const picklist = createPicklistHandler({ baseUrl: warehouse.url });
 */
export function createPicklistHandler(options: HttpHandlerOptions) {
  return picklistEffect.implement({
    policy: policyOf(options),
    run: (input, context) =>
      runRequest(options, "/picklists", input, context.idempotencyKey, context.signal, resultSchema),
    lookup: lookupMatching({
      find: (key, { signal }) => findRecord(options, "/picklists", key, signal, recordSchema),
      matches: ({ orderId, lines }, input) => sameRequest({ orderId, lines }, input),
      outcome: (record) => succeeded({ picklistId: record.picklistId }),
    }),
  });
}
