import { lookupMatching, succeeded } from "oncely";
import { z } from "zod";
import { refundEffect } from "./declarations.js";
import { findRecord, type HttpHandlerOptions, policyOf, runRequest, sameRequest } from "./http.js";

const resultSchema = z.object({ refundId: z.string().min(1) }).transform(({ refundId }) => ({ refundId }));
const recordSchema = z.object({
  status: z.literal("refunded"),
  refundId: z.string().min(1),
  paymentId: z.string(),
  amount: z.number(),
});

/**
 * Refunds through the payment provider: `POST /refunds` with the effect key (`order:{id}:refund`,
 * or `order:{id}:refund:{adjustmentId}` for a partial refund) as `Idempotency-Key`; `lookup` is
 * `GET /refunds?idempotencyKey=`. A refund is compensation, and compensation is itself a
 * non-idempotent call: its own key, its own status, its own dedup.
 *
 * Failure window: between the provider's refund and the commit of `RefundCompleted`, a crash or a
 * lost answer leaves the refund unrecorded. With `providerDedups: true` the dispatcher runs again
 * with the same key and the provider answers the same `refundId`; with `providerDedups: false` only
 * `lookup` may settle it, so the money never goes back twice. A 422 (no such payment, or more than
 * is left of it) is a definite refusal: nothing was refunded.
 *
 * @example
 * const refund = createRefundHandler({ baseUrl: provider.url });
 */
export function createRefundHandler(options: HttpHandlerOptions) {
  return refundEffect.implement({
    policy: policyOf(options),
    run: (input, context) =>
      runRequest(options, "/refunds", input, context.idempotencyKey, context.signal, resultSchema),
    lookup: lookupMatching({
      find: (key, { signal }) => findRecord(options, "/refunds", key, signal, recordSchema),
      // A refund under our key of another payment or amount is not ours: an operator must look.
      matches: ({ paymentId, amount }, input) =>
        sameRequest({ paymentId, amount }, { paymentId: input.paymentId, amount: input.amount }),
      outcome: (record) => succeeded({ refundId: record.refundId }),
    }),
  });
}
