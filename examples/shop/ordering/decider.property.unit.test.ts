import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { DecideContext, EffectOutcome } from "../../../src/core/decider.js";
import { CommandRejectedError } from "../../../src/core/errors.js";
import type { EffectStatus } from "../../../src/effects/types.js";
import { orderActor } from "./actor.js";
import type { OrderCommand, PlaceOrder } from "./commands.js";
import { EFFECT_FACTS, type EffectFact, effectKey } from "./effects.js";
import { ORDER_EFFECT_FACTS, type OrderEvent } from "./events.js";
import type { IntegrationCommand } from "./integration.js";
import type { OrderState } from "./state.js";
import { attentionReasons, deriveStatus } from "./status.js";

/**
 * Whatever order, duplication or lateness the integration facts (payment, picklist, shipment) and
 * the mail outcomes arrive in, no fact moves backwards, no mail is started twice, and the derived
 * status agrees with the facts.
 */

const id = "42";
const context = (version: number): DecideContext => ({
  address: `order/${id}`,
  id,
  now: Date.UTC(2026, 0, 1),
  messageId: undefined,
  version,
});
const placeOrder: PlaceOrder = {
  type: "PlaceOrder",
  customerEmail: "ada@example.com",
  currency: "EUR",
  lines: [{ sku: "book", quantity: 2, unitPrice: 1250 }],
};
const RESULT_FIELD: Record<EffectFact, string> = {
  payment: "paymentId",
  confirmationEmail: "messageId",
  picklist: "picklistId",
  shippingEmail: "messageId",
};
const RANK: Record<EffectStatus, number> = { NotRequested: 0, Pending: 1, Unknown: 2, Completed: 3, Failed: 3 };

const outcomeArb: fc.Arbitrary<EffectOutcome> = fc
  .record({
    fact: fc.constantFrom(...ORDER_EFFECT_FACTS),
    kind: fc.constantFrom("succeeded", "failed", "unknown", "needs-reconciliation"),
    via: fc.constantFrom("run" as const, "lookup" as const, "operator" as const),
    attempt: fc.integer({ min: 1, max: 4 }),
    variant: fc.integer({ min: 1, max: 3 }),
  })
  .map(({ fact, kind, via, attempt, variant }): EffectOutcome => {
    const key = effectKey(id, fact);
    switch (kind) {
      case "succeeded":
        return {
          type: "oncely.effect.succeeded",
          key,
          kind: fact,
          result: { [RESULT_FIELD[fact]]: `${fact}-${variant}` },
          attempt,
          via,
        };
      case "failed":
        return { type: "oncely.effect.failed", key, kind: fact, error: `no ${variant}`, attempt, via };
      case "unknown":
        return { type: "oncely.effect.unknown", key, kind: fact, error: "reset", attempt };
      default:
        return { type: "oncely.effect.needs-reconciliation", key, kind: fact, error: "budget spent", attempt };
    }
  });
const factArb: fc.Arbitrary<IntegrationCommand> = fc
  .record({ kind: fc.integer({ min: 0, max: 4 }), n: fc.integer({ min: 1, max: 3 }) })
  .map(({ kind, n }): IntegrationCommand => {
    const eventId = `evt-${kind}-${n}`;
    switch (kind) {
      case 0:
        return { type: "RecordPaymentProcessed", eventId, paymentId: `pay-${n}` };
      case 1:
        return { type: "RecordPaymentFailed", eventId, reason: `declined ${n}` };
      case 2:
        return { type: "RecordPaymentNeedsAttention", eventId, error: `timeout ${n}` };
      case 3:
        return { type: "RecordPicklistAccepted", eventId, picklistId: `pck-${n}` };
      default:
        return {
          type: "RecordOrderShipped",
          eventId,
          shipmentId: `ship-${n}`,
          warehouseEventId: `wh-${n}`,
          shippedAt: "2026-01-02T10:00:00.000Z",
        };
    }
  });
const commandArb = fc.oneof(
  { weight: 6, arbitrary: outcomeArb },
  { weight: 4, arbitrary: factArb },
  { weight: 1, arbitrary: fc.constant<OrderCommand>(placeOrder) },
);
// Commands are repeated on purpose: a subsequence duplicated is what at-least-once delivery produces.
const scriptArb = fc
  .array(commandArb, { minLength: 1, maxLength: 40 })
  .chain((commands) =>
    fc.tuple(fc.constant(commands), fc.array(fc.nat({ max: commands.length - 1 }), { maxLength: 10 })),
  )
  .map(([commands, repeats]) => [...commands, ...repeats.map((i) => commands[i] as OrderCommand | EffectOutcome)]);

const factsOf = (state: OrderState) => ({
  ...Object.fromEntries(EFFECT_FACTS.map((fact) => [fact, state[fact]])),
  shipping: state.shipping,
});

function checkStatusConsistent(state: OrderState): void {
  const status = deriveStatus(state);
  const reasons = attentionReasons(state);
  const shipped = state.shipping.status === "Completed";
  expect(status === "attention").toBe(reasons.length > 0);
  for (const fact of EFFECT_FACTS) {
    if (state[fact].needsReconciliation) expect(status).toBe("attention");
    if (state[fact].status === "Completed") expect(state[fact].resultId).not.toBeNull();
  }
  if (state.payment.status !== "Completed") {
    // An order whose payment failed or is not yet processed mails nothing.
    expect(state.confirmationEmail.status).toBe("NotRequested");
    expect(state.shippingEmail.status).toBe("NotRequested");
  }
  if (state.shippingEmail.status !== "NotRequested") expect(shipped).toBe(true);
  switch (status) {
    case undefined:
      expect(state.details).toBeNull();
      break;
    case "placed":
      expect(["Pending", "Unknown"]).toContain(state.payment.status);
      expect(shipped).toBe(false);
      break;
    case "paid":
      expect(state.payment.status).toBe("Completed");
      expect(shipped).toBe(false);
      break;
    case "payment_failed":
      expect(state.payment.status).toBe("Failed");
      expect(shipped).toBe(false);
      break;
    case "shipped":
      expect(shipped).toBe(true);
      break;
    case "completed":
      for (const fact of ["payment", "confirmationEmail", "shippingEmail"] as const) {
        expect(state[fact].status).toBe("Completed");
      }
      expect(shipped).toBe(true);
      break;
  }
}

describe("order decider under any interleaving and duplication", () => {
  it("never moves a fact backwards, never starts an effect twice, and derives a consistent status", () => {
    fc.assert(
      fc.property(scriptArb, (script) => {
        let state = orderActor.initialState(id);
        const journal: OrderEvent[] = [];
        const started = new Set<string>();
        for (const command of script) {
          let decision: ReturnType<typeof orderActor.decide>;
          try {
            decision = orderActor.decide(command, state, context(journal.length));
          } catch (error) {
            // Refusals are allowed only for outcomes of effects never requested (or placed twice).
            expect(error).toBeInstanceOf(CommandRejectedError);
            continue;
          }
          for (const effect of decision.effects ?? []) {
            expect(started.has(effect.key)).toBe(false);
            started.add(effect.key);
          }
          const before = state;
          for (const event of decision.events ?? []) {
            state = orderActor.evolve(state, event);
            journal.push(event);
          }
          for (const [name, fact] of Object.entries(factsOf(state))) {
            const old = (factsOf(before) as Record<string, typeof fact>)[name];
            if (!old) throw new Error(`missing fact ${name}`);
            expect(RANK[fact.status]).toBeGreaterThanOrEqual(RANK[old.status]);
            if (old.status === "Completed" || old.status === "Failed") expect(fact).toEqual(old);
          }
          if (before.details) expect(state.details).toEqual(before.details);
          checkStatusConsistent(state);
        }
        // Replay from the journal gives the same state: recovery only runs evolve.
        expect(journal.reduce(orderActor.evolve, orderActor.initialState(id))).toEqual(state);
        // Every mail started is one the state knows as requested.
        for (const fact of ORDER_EFFECT_FACTS) {
          expect(started.has(effectKey(id, fact))).toBe(state[fact].status !== "NotRequested");
        }
      }),
      { numRuns: 400, seed: 20260101 },
    );
  });
});
