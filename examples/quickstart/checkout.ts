/**
 * The smallest complete oncely program: an actor that charges a card exactly once, a declared
 * effect whose handler talks to the provider with the effect's key, and a host that runs it and
 * awaits the result. The README quotes this file; examples/quickstart/checkout.unit.test.ts runs it.
 */
import {
  CommandRejectedError,
  createHost,
  defineActor,
  defineEffect,
  type EffectStatus,
  effectStatusAfter,
  failed,
  succeeded,
} from "oncely";
import { memoryJournal } from "oncely/testing";
import { z } from "zod";

/**
 * Declared once: `decide` requests it, a dispatcher runs it, and its outcomes come back to the
 * actor typed (`command.input` is `{ amount: number }`, `command.result` is `{ id: string }`).
 * The dispatcher checks the stored input against the schema before every run.
 */
export const payment = defineEffect({
  kind: "payment",
  input: z.object({ amount: z.number().int().positive() }),
  result: z.object({ id: z.string() }),
});

interface Checkout {
  amount: number | null;
  payment: EffectStatus;
  paymentId: string | null;
}
type Command = { type: "Checkout"; amount: number };
type Event =
  | { type: "CheckoutStarted"; amount: number }
  | { type: "PaymentCompleted"; paymentId: string }
  | { type: "PaymentFailed"; reason: string }
  | { type: "PaymentUnknown" };

export const checkout = defineActor<Checkout, Command, Event, typeof payment>({
  type: "checkout",
  effects: [payment], // its decide takes Command | OutcomeOf<typeof payment>
  initialState: () => ({ amount: null, payment: "NotRequested", paymentId: null }),
  // Pure: recovery replays only this. Never call a provider here.
  evolve: (state, event) => {
    switch (event.type) {
      case "CheckoutStarted":
        return { ...state, amount: event.amount, payment: "Pending" };
      case "PaymentCompleted":
        return { ...state, payment: effectStatusAfter(state.payment, "Completed"), paymentId: event.paymentId };
      case "PaymentFailed":
        return { ...state, payment: effectStatusAfter(state.payment, "Failed") };
      case "PaymentUnknown":
        return { ...state, payment: effectStatusAfter(state.payment, "Unknown") };
    }
  },
  // Pure: returns events, effects and a reply. The runtime commits them in one transaction.
  decide: (command, state, { id }) => {
    switch (command.type) {
      case "Checkout":
        if (command.amount <= 0) throw new CommandRejectedError("amount must be positive");
        if (state.payment !== "NotRequested") return { reply: state }; // asked again: nothing new starts
        return {
          events: [{ type: "CheckoutStarted", amount: command.amount }],
          // The key names the business action, so every retry and every recovery uses the same one.
          effects: [payment.request(`checkout:${id}:payment`, { amount: command.amount })],
        };
      case "oncely.effect.succeeded":
        return { events: [{ type: "PaymentCompleted", paymentId: command.result.id }] };
      case "oncely.effect.failed":
        return { events: [{ type: "PaymentFailed", reason: command.error }] };
      case "oncely.effect.unknown":
        return { events: [{ type: "PaymentUnknown" }] };
      case "oncely.effect.needs-reconciliation":
        return {}; // still Unknown; an operator settles it (oncely reconcile), and its outcome comes back here
    }
  },
});

/** A provider that dedups by idempotency key, as Stripe-like APIs do: the handler of `payment`. */
export function fakePaymentProvider() {
  const charges = new Map<string, { id: string; amount: number }>();
  const handler = payment.implement({
    policy: { providerDedups: true, timeoutMs: 1_000, leaseMs: 5_000 },
    run: async (input, { idempotencyKey }) => {
      if (input.amount > 10_000) return failed("card declined");
      const charge = charges.get(idempotencyKey) ?? { id: `ch_${charges.size + 1}`, amount: input.amount };
      charges.set(idempotencyKey, charge);
      return succeeded({ id: charge.id });
    },
  });
  return { charges, handler };
}

export async function main() {
  const journal = memoryJournal(); // or sqliteJournal({ path }) from "oncely/sqlite", postgresJournal(...) from "oncely/postgres"
  const provider = fakePaymentProvider();
  // One runtime and its dispatcher (add `relay` and `consumers` for integration events).
  const host = createHost({ journal, actors: [checkout], handlers: [provider.handler] });
  await host.start();

  await host.send("checkout/42", { type: "Checkout", amount: 1999 }, { messageId: "req-1" });
  await host.send("checkout/42", { type: "Checkout", amount: 1999 }, { messageId: "req-1" }); // a retry: deduplicated
  const { state } = await host.waitFor<Checkout>("checkout/42", (s) => s.payment !== "Pending", { timeoutMs: 5_000 });

  await host.stop(); // stops everything it started; the journal is yours to close
  await journal.close();
  return { state, charges: provider.charges.size };
}
