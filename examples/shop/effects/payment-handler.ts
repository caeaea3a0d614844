import { failed, lookupMatching, succeeded } from "oncely";
import { z } from "zod";
import type { PaymentInput } from "../ordering/effects.js";
import { paymentEffect } from "./declarations.js";
import { findRecord, type HttpHandlerOptions, policyOf, runRequest, sameRequest } from "./http.js";

const resultSchema = z.object({ paymentId: z.string().min(1) }).transform(({ paymentId }) => ({ paymentId }));
/**
 * The provider's record of a key. The contract names only `{paymentId, status}`; `orderId`,
 * `amount` and `currency` are optional echoes of the request, compared only when present.
 */
const echoed = {
  orderId: z.string().optional(),
  amount: z.number().optional(),
  currency: z.string().optional(),
};
const recordSchema = z.discriminatedUnion("status", [
  z.object({ status: z.literal("succeeded"), paymentId: z.string().min(1), ...echoed }),
  z.object({ status: z.literal("declined"), reason: z.string().optional(), ...echoed }),
]);

/** The fields of the input the provider echoed, so a minimal record compares as "nothing contradicts". */
function echoedPart(input: PaymentInput, record: z.infer<typeof recordSchema>): Partial<PaymentInput> {
  const fields = (["orderId", "amount", "currency"] as const).filter((f) => record[f] !== undefined);
  return Object.fromEntries(fields.map((f) => [f, input[f]]));
}

/**
 * Charges through the payment provider: `POST /payments` with the effect key as
 * `Idempotency-Key`; `lookup` is `GET /payments?idempotencyKey=`.
 *
 * Failure window: between the provider's charge and the commit of `PaymentCompleted`, a crash or a
 * lost answer leaves the charge unrecorded. With `providerDedups: true` the dispatcher runs again
 * with the same key and the provider answers the same `paymentId`; with `providerDedups: false`
 * (a provider that charges on every request) only `lookup` may settle it.
 *
 * @example
 * const payment = createPaymentHandler({ baseUrl: provider.url });
 * const noDedup = createPaymentHandler({ baseUrl: provider.url, providerDedups: false });
 */
export function createPaymentHandler(options: HttpHandlerOptions) {
  return paymentEffect.implement({
    policy: policyOf(options),
    run: (input, context) =>
      runRequest(options, "/payments", input, context.idempotencyKey, context.signal, resultSchema),
    lookup: lookupMatching({
      find: (key, { signal }) => findRecord(options, "/payments", key, signal, recordSchema),
      // A record under our key for another order or amount is not our payment: an operator must look.
      matches: (record, input) => {
        const { orderId, amount, currency } = record;
        return sameRequest({ orderId, amount, currency }, echoedPart(input, record));
      },
      outcome: (record) =>
        record.status === "succeeded"
          ? succeeded({ paymentId: record.paymentId })
          : failed(record.reason ?? "declined"),
    }),
  });
}
