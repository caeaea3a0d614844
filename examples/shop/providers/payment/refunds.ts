import type { Clock, Random } from "oncely";
import { z } from "zod";
import { drawFaults, type FaultSettings } from "../shared/faults.js";
import {
  badRequest,
  canonicalJson,
  injectedFailure,
  keyedRequest,
  lookupKeyOf,
  type ProviderApp,
} from "../shared/http.js";
import type { JsonlLedger } from "../shared/ledger.js";
import type { PaymentFaults, PaymentLedger } from "./server.js";

/**
 * The payment provider's refunds: `POST /refunds` with `Idempotency-Key` and `{paymentId, amount}`,
 * `GET /refunds?idempotencyKey=` to look one up. Like a real provider it refuses (422) a refund of
 * a payment it never made, or one that would take the payment's refunds past what was charged; a
 * refund is one ledger entry, written before any answer.
 *
 * The cap is the provider's last line, not the shop's rule: the order decides that nothing more
 * than the charge is ever asked for (`ordering/refunds.ts`). In `noIdempotency` mode a repeated
 * key refunds again (while the cap allows), exactly as a repeated charge charges again.
 */

export const refundRequestSchema = z.strictObject({
  paymentId: z.string().min(1, "must not be empty"),
  amount: z.number().int("must be an integer in minor units").positive("must be positive"),
});
export type RefundRequest = z.infer<typeof refundRequestSchema>;

export interface Refund extends RefundRequest {
  refundId: string;
  idempotencyKey: string;
  /** The charge's order and currency, copied so that an audit can join without the charge. */
  orderId: string;
  currency: string;
  at: string;
}

export interface RefundRoutesOptions {
  provider: ProviderApp;
  faults: FaultSettings<PaymentFaults>;
  random: Random;
  clock: Clock;
  ledger: JsonlLedger<PaymentLedger>;
}

export function addRefundRoutes({ provider, faults, random, clock, ledger }: RefundRoutesOptions): void {
  let counter = ledger.data.refunds.length;
  const nextId = () => `ref_${String(++counter).padStart(6, "0")}`;
  /** Latest refund per key, rebuilt from the ledger. */
  const byKey = new Map<string, Refund>(ledger.data.refunds.map((r) => [r.idempotencyKey, r]));
  const refunded = (paymentId: string) =>
    ledger.data.refunds.filter((r) => r.paymentId === paymentId).reduce((sum, r) => sum + r.amount, 0);
  const answerOf = (refund: Refund) => ({ refundId: refund.refundId, status: "refunded", amount: refund.amount });

  provider.app.post("/refunds", async (request, reply) => {
    const parsed = keyedRequest(request, reply, refundRequestSchema);
    if (!parsed) return reply;
    const { key, body } = parsed;
    const current = faults.get();
    const plan = drawFaults(current, random);
    if (plan.fail) return injectedFailure(reply);

    const prior = byKey.get(key);
    if (prior && !current.noIdempotency) {
      const first = { request: canonicalJson({ paymentId: prior.paymentId, amount: prior.amount }) };
      return provider.replay(request, reply, plan, key, { ...first, status: 201, body: answerOf(prior) }, body);
    }
    const charge = ledger.data.charges.find((c) => c.paymentId === body.paymentId);
    if (!charge) {
      return provider.answer(request, reply, plan, 422, {
        status: "refused",
        reason: `no payment ${body.paymentId} to refund`,
      });
    }
    const remaining = charge.amount - refunded(charge.paymentId);
    if (body.amount > remaining) {
      return provider.answer(request, reply, plan, 422, {
        status: "refused",
        reason: `refund of ${body.amount} exceeds what is left of payment ${charge.paymentId} (${remaining} of ${charge.amount})`,
      });
    }
    const refund: Refund = {
      refundId: nextId(),
      idempotencyKey: key,
      ...body,
      orderId: charge.orderId,
      currency: charge.currency,
      at: new Date(clock.now()).toISOString(),
    };
    // The money goes back here, before any answer: a lost answer does not undo it.
    ledger.append("refunds", refund);
    byKey.set(key, refund);
    return provider.answer(request, reply, plan, 201, answerOf(refund));
  });

  provider.app.get("/refunds", async (request, reply) => {
    const key = lookupKeyOf(request);
    if (!key.ok) return reply.code(400).send(badRequest(key.issues));
    const found = byKey.get(key.value);
    if (!found) return reply.code(404).send({ error: `no refund for Idempotency-Key "${key.value}"` });
    const { refundId, paymentId, amount, orderId, currency } = found;
    return { refundId, status: "refunded", paymentId, amount, orderId, currency };
  });
}
