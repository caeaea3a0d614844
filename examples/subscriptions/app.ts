import {
  createHost,
  defineEffect,
  defineProjection,
  failed,
  flow,
  type Journal,
  lookupMatching,
  succeeded,
} from "oncely";
import { z } from "zod";
import { cards, mail } from "./providers.js";

const charge = defineEffect({
  kind: "charge",
  run: async (input: { customer: string; amount: number }, { idempotencyKey }) => {
    try {
      return succeeded({ chargeId: (await cards.charge(input.customer, input.amount, idempotencyKey)).id });
    } catch (error) {
      return failed(String(error));
    }
  },
  lookup: lookupMatching({
    find: (key) => cards.find(key),
    matches: (found, input) => found.customer === input.customer && found.amount === input.amount,
    outcome: (found) => succeeded({ chargeId: found.id }),
  }),
});

const receipt = defineEffect({
  kind: "receipt",
  run: async (input: { to: string; text: string }) => succeeded(await mail.send(input.to, input.text)),
});

export const renewal = flow("renewal", {
  commands: z.object({ type: z.literal("Renew"), customer: z.string().min(1), amount: z.number().int().positive() }),
})
  .effect("charge", charge, ({ start }) => ({ customer: start.customer, amount: start.amount }))
  .effect("receipt", receipt, ({ start, results }) => ({
    to: start.customer,
    text: `Renewed for ${start.amount} (charge ${results.charge.chargeId})`,
  }))
  .publish("renewed", ({ start, results }) => ({
    type: "SubscriptionRenewed",
    source: "billing",
    aggregateId: start.customer,
    payload: { amount: start.amount, chargeId: results.charge.chargeId },
  }))
  .build();

export const revenue = defineProjection<{ total: number; renewals: number }>({
  collection: "revenue",
  key: (event) => (event.type === "SubscriptionRenewed" ? event.aggregateId : undefined),
  project: (doc, event) => {
    const { amount } = event.payload as { amount: number };
    return { total: (doc?.total ?? 0) + amount, renewals: (doc?.renewals ?? 0) + 1 };
  },
});

export const subscriptions = (journal: Journal) =>
  createHost({
    journal,
    actors: [renewal],
    handlers: [charge, receipt],
    transport: "journal",
    consumers: [{ name: "revenue", mode: "sequenced", handler: revenue, subjects: ["oncely.>"] }],
  });
