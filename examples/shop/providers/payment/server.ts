import { type Clock, type IdGenerator, systemClock } from "oncely";
import { seededRandom } from "oncely/testing";
import { z } from "zod";
import { baseFaultsShape, drawFaults, FaultSettings, noBaseFaults } from "../shared/faults.js";
import {
  badRequest,
  canonicalJson,
  createProviderApp,
  injectedFailure,
  keyedRequest,
  lookupKeyOf,
} from "../shared/http.js";
import { JsonlLedger } from "../shared/ledger.js";
import { addRefundRoutes, type Refund } from "./refunds.js";

/**
 * A fake card-payment provider over real HTTP, shaped like the ones the seed talks about: it
 * deduplicates by `Idempotency-Key` (unless told not to), can be asked what happened to a key,
 * and fails in every way a real one does. It refunds too (`./refunds.ts`).
 */

export const paymentFaultsSchema = z.strictObject({
  ...baseFaultsShape,
  /** Fraction of new payments declined (402), drawn from the seeded random. */
  declineRate: z.number().min(0).max(1),
  /**
   * The provider ignores idempotency keys: the same key charges (or refunds) again every time. A client must
   * then look up by key and never retry blindly. Lookup still finds the latest charge for a key.
   */
  noIdempotency: z.boolean(),
  /**
   * The lookup endpoint answers 503 (the provider's reporting API is down): an ambiguous charge
   * can then only be settled by an operator who reads the ledger.
   */
  lookupDown: z.boolean(),
});
export type PaymentFaults = z.infer<typeof paymentFaultsSchema>;
export const noPaymentFaults: PaymentFaults = {
  ...noBaseFaults,
  declineRate: 0,
  noIdempotency: false,
  lookupDown: false,
};

export const paymentRequestSchema = z.strictObject({
  orderId: z.string().min(1),
  amount: z.number().int("must be an integer in minor units").positive("must be positive"),
  currency: z.string().regex(/^[A-Z]{3}$/, "must be a 3-letter ISO code in upper case"),
});
export type PaymentRequest = z.infer<typeof paymentRequestSchema>;

export interface Charge extends PaymentRequest {
  paymentId: string;
  idempotencyKey: string;
  at: string;
}
export interface Decline extends PaymentRequest {
  declineId: string;
  idempotencyKey: string;
  reason: string;
  at: string;
}
export interface PaymentLedger extends Record<string, object[]> {
  charges: Charge[];
  declines: Decline[];
  refunds: Refund[];
}

export interface PaymentProviderOptions {
  /** Default 0 (any free port). */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
  /** Seed of the random behind every fault. Default 1. */
  seed?: number;
  faults?: Partial<PaymentFaults>;
  /**
   * Deterministic declines: an amount whose decimal digits end with this string is declined
   * (e.g. "13" declines 1013 and 513). Checked before `declineRate`.
   */
  declineAmountsEndingWith?: string | undefined;
  /** Append every ledger entry to this JSON-lines file; an existing file is loaded at start. */
  ledgerPath?: string | undefined;
  clock?: Clock;
  ids?: IdGenerator;
}

export interface PaymentProvider {
  url: string;
  /** Live view of the provider's ledger (what it really charged). */
  ledger: PaymentLedger;
  faults(): PaymentFaults;
  /** Partial update; throws a ZodError on invalid values. */
  setFaults(faults: Partial<PaymentFaults>): PaymentFaults;
  close(): Promise<void>;
}

type Outcome = { kind: "charge"; entry: Charge } | { kind: "decline"; entry: Decline };

export async function startPaymentProvider(options: PaymentProviderOptions = {}): Promise<PaymentProvider> {
  const clock = options.clock ?? systemClock;
  const random = seededRandom(options.seed ?? 1);
  const faults = new FaultSettings(paymentFaultsSchema, noPaymentFaults, options.faults);
  const ledger = new JsonlLedger<PaymentLedger>(["charges", "declines", "refunds"], options.ledgerPath);
  // Counting on from a loaded ledger keeps ids unique across restarts of the provider.
  let counter = ledger.data.charges.length + ledger.data.declines.length;
  const ids = options.ids ?? { next: () => `pay_${String(++counter).padStart(6, "0")}` };

  /** Latest outcome per key, with the canonical request it answered. Rebuilt from the ledger. */
  const byKey = new Map<string, { request: string; outcome: Outcome }>();
  const remember = (outcome: Outcome) => {
    const { orderId, amount, currency } = outcome.entry;
    byKey.set(outcome.entry.idempotencyKey, { request: canonicalJson({ orderId, amount, currency }), outcome });
  };
  const loaded: Outcome[] = [
    ...ledger.data.charges.map((entry) => ({ kind: "charge" as const, entry })),
    ...ledger.data.declines.map((entry) => ({ kind: "decline" as const, entry })),
  ].sort((a, b) => (a.entry.at < b.entry.at ? -1 : a.entry.at > b.entry.at ? 1 : 0));
  for (const outcome of loaded) remember(outcome);

  const provider = createProviderApp({ name: "payment", faults, clock, ledger: () => ledger.data });
  const { app } = provider;

  const answerOf = (outcome: Outcome) =>
    outcome.kind === "charge"
      ? { status: 201, body: { paymentId: outcome.entry.paymentId, status: "succeeded" } }
      : { status: 402, body: { status: "declined", reason: outcome.entry.reason } };

  const declineReason = (request: PaymentRequest, draw: number): string | undefined => {
    const suffix = options.declineAmountsEndingWith;
    if (suffix !== undefined && suffix !== "" && String(request.amount).endsWith(suffix)) {
      return `card declined: amount ends with ${suffix}`;
    }
    if (draw < faults.get().declineRate) return "card declined: insufficient funds";
    return undefined;
  };

  app.post("/payments", async (request, reply) => {
    const parsed = keyedRequest(request, reply, paymentRequestSchema);
    if (!parsed) return reply;
    const { key, body } = parsed;

    const current = faults.get();
    const plan = drawFaults(current, random);
    const declineDraw = random.next();
    if (plan.fail) return injectedFailure(reply);

    const prior = byKey.get(key);
    if (prior && !current.noIdempotency) {
      return provider.replay(request, reply, plan, key, { request: prior.request, ...answerOf(prior.outcome) }, body);
    }

    const at = new Date(clock.now()).toISOString();
    const reason = declineReason(body, declineDraw);
    const outcome: Outcome =
      reason === undefined
        ? { kind: "charge", entry: { paymentId: ids.next(), idempotencyKey: key, ...body, at } }
        : { kind: "decline", entry: { declineId: ids.next(), idempotencyKey: key, ...body, reason, at } };
    // The money moves here, before any answer: a lost answer does not undo it.
    ledger.append(outcome.kind === "charge" ? "charges" : "declines", outcome.entry as Charge & Decline);
    remember(outcome);
    const fresh = answerOf(outcome);
    return provider.answer(request, reply, plan, fresh.status, fresh.body);
  });

  app.get("/payments", async (request, reply) => {
    const key = lookupKeyOf(request);
    if (!key.ok) return reply.code(400).send(badRequest(key.issues));
    if (faults.get().lookupDown) return reply.code(503).send({ error: "lookup unavailable (fault: lookupDown)" });
    const found = byKey.get(key.value);
    if (!found) return reply.code(404).send({ error: `no payment for Idempotency-Key "${key.value}"` });
    const { orderId, amount, currency } = found.outcome.entry;
    return found.outcome.kind === "charge"
      ? { paymentId: found.outcome.entry.paymentId, status: "succeeded", orderId, amount, currency }
      : { status: "declined", reason: found.outcome.entry.reason, orderId, amount, currency };
  });

  addRefundRoutes({ provider, faults, random, clock, ledger });

  const url = await provider.listen(options.host ?? "127.0.0.1", options.port ?? 0);
  return {
    url,
    ledger: ledger.data,
    faults: () => faults.get(),
    setFaults: (update) => faults.set(update),
    close: () => provider.close(),
  };
}
