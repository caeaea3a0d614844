import fc from "fast-check";
import type { EffectOutcome, EffectStatus } from "oncely";
import { CommandRejectedError } from "oncely";
import { describe, expect, it } from "vitest";
import { orderActor } from "./actor.js";
import type { OrderCommand, PlaceOrder } from "./commands.js";
import { attemptKey, EFFECT_FACTS, type EffectFact, effectOfKey, MAX_MAIL_ATTEMPTS } from "./effects.js";
import { ORDER_EFFECT_FACTS, type OrderEvent } from "./events.js";
import { id, orderContext } from "./fixtures.js";
import { refundKey } from "./refunds.js";
import type { OrderState } from "./state.js";
import { attentionReasons, deriveStatus } from "./status.js";

/**
 * Whatever order, duplication or lateness the integration facts (payment, picklist, shipment) and
 * the mail outcomes arrive in (for any of a mail's attempt keys, including stragglers of earlier
 * attempts and keys never asked for), no fact moves backwards within an attempt, a mail's next
 * attempt starts only after a definite failure and under a new key, nothing is started twice, and
 * the derived status agrees with the facts.
 */

const context = orderContext;
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
  cancellationEmail: "messageId",
  stockEmail: "messageId",
};
const RANK: Record<EffectStatus, number> = { NotRequested: 0, Pending: 1, Unknown: 2, Completed: 3, Failed: 3 };

const outcomeArb: fc.Arbitrary<EffectOutcome> = fc
  .record({
    fact: fc.constantFrom(...ORDER_EFFECT_FACTS),
    kind: fc.constantFrom("succeeded", "failed", "unknown", "needs-reconciliation"),
    via: fc.constantFrom("run" as const, "lookup" as const, "operator" as const),
    attempt: fc.integer({ min: 1, max: 4 }),
    variant: fc.integer({ min: 1, max: 3 }),
    // Mostly the first key; the others are due only after failures (or never, past the last attempt).
    keyAttempt: fc.constantFrom(1, 1, 2, 3, MAX_MAIL_ATTEMPTS + 1),
  })
  .map(({ fact, kind, via, attempt, variant, keyAttempt }): EffectOutcome => {
    const key = attemptKey(id, fact, keyAttempt);
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
// Refund outcomes, for the full refund's key and an adjustment's (asked for or not).
const refundOutcomeArb: fc.Arbitrary<EffectOutcome> = fc
  .record({
    key: fc.constantFrom(refundKey(id), refundKey(id, "adj-1"), refundKey(id, "adj-2")),
    kind: fc.constantFrom("succeeded", "failed", "unknown"),
    n: fc.integer({ min: 1, max: 3 }),
  })
  .map(({ key, kind, n }): EffectOutcome => {
    if (kind === "succeeded") {
      return {
        type: "oncely.effect.succeeded",
        key,
        kind: "refund",
        result: { refundId: `ref-${n}` },
        attempt: 1,
        via: "run",
      };
    }
    if (kind === "failed")
      return { type: "oncely.effect.failed", key, kind: "refund", error: "refused", attempt: 1, via: "run" };
    return { type: "oncely.effect.unknown", key, kind: "refund", error: "reset", attempt: n };
  });
const factArb: fc.Arbitrary<OrderCommand> = fc
  .record({ kind: fc.integer({ min: 0, max: 7 }), n: fc.integer({ min: 1, max: 3 }) })
  .map(({ kind, n }): OrderCommand => {
    const eventId = `evt-${kind}-${n}`;
    switch (kind) {
      case 5:
        return { type: "CancelOrder", reason: `changed my mind ${n}` };
      case 6:
        return { type: "RecordPicklistRejected", eventId, reason: "out of stock" };
      case 7:
        return {
          type: "RecordLinesUnavailable",
          eventId,
          adjustmentId: `adj-${n}`,
          lines: [{ sku: "book", quantity: 1 }],
        };
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
// The provider refusing one mail's attempts in turn: random outcomes alone rarely fail key 1, then
// key 2, then key 3 in that order, and the last attempt is what must end in attention.
const refusalsArb: fc.Arbitrary<EffectOutcome[]> = fc
  .record({ fact: fc.constantFrom(...ORDER_EFFECT_FACTS), upTo: fc.integer({ min: 1, max: MAX_MAIL_ATTEMPTS + 1 }) })
  .map(({ fact, upTo }) =>
    Array.from({ length: upTo }, (_, i) => ({
      type: "oncely.effect.failed" as const,
      key: attemptKey(id, fact, i + 1),
      kind: fact,
      error: `refused ${i + 1}`,
      attempt: 1,
      via: "run" as const,
    })),
  );
const commandArb = fc.oneof(
  { weight: 6, arbitrary: outcomeArb.map((c) => [c]) },
  { weight: 1, arbitrary: refundOutcomeArb.map((c) => [c]) },
  { weight: 4, arbitrary: factArb.map((c) => [c]) },
  { weight: 1, arbitrary: refusalsArb },
  { weight: 1, arbitrary: fc.constant<OrderCommand[]>([placeOrder]) },
);
// Commands are repeated on purpose: a subsequence duplicated is what at-least-once delivery produces.
const scriptArb = fc
  .array(commandArb, { minLength: 1, maxLength: 40 })
  .map((groups): (OrderCommand | EffectOutcome)[] => groups.flat())
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
    // An order whose payment failed or is not yet processed mails nothing but a cancellation, refunds nothing.
    expect(state.refunds).toEqual([]);
    expect(state.confirmationEmail.status).toBe("NotRequested");
    expect(state.shippingEmail.status).toBe("NotRequested");
  }
  if (state.shippingEmail.status !== "NotRequested") expect(shipped).toBe(true);
  // Refunds never ask for more than was charged.
  const committed = state.refunds.filter((r) => r.status !== "Failed");
  expect(committed.reduce((sum, r) => sum + r.amount, 0)).toBeLessThanOrEqual(state.details?.amount ?? 0);
  for (const fact of ORDER_EFFECT_FACTS) {
    const mail = state[fact];
    expect(mail.key).toBe(mail.attempt === 0 ? null : attemptKey(id, fact, mail.attempt));
    // A failed attempt with attempts left is followed by the next one in the same decision.
    if (mail.status === "Failed") expect(mail.attempt).toBe(MAX_MAIL_ATTEMPTS);
  }
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

/** One event moved `old` to `now`: monotonic within an attempt; a new attempt only after a definite failure. */
function checkStep(name: string, old: OrderState, now: OrderState): void {
  // Only the mails have attempts; every other fact is one effect, monotonic from start to end.
  type Fact = { status: EffectStatus; attempt?: number };
  const before = (factsOf(old) as Record<string, Fact>)[name];
  const after = (factsOf(now) as Record<string, Fact>)[name];
  if (!before || !after) throw new Error(`missing fact ${name}`);
  if (before.attempt !== undefined && after.attempt !== before.attempt) {
    expect(after.attempt).toBe(before.attempt + 1);
    expect(["NotRequested", "Failed"]).toContain(before.status);
    expect(after.status).toBe("Pending");
    expect(after.attempt).toBeLessThanOrEqual(MAX_MAIL_ATTEMPTS);
    return;
  }
  expect(RANK[after.status]).toBeGreaterThanOrEqual(RANK[before.status]);
  if (before.status === "Completed" || before.status === "Failed") expect(after).toEqual(before);
}

/** Which of order `id`'s mails, and which attempt, `key` names; undefined for any other key. */
function mailOfKey(key: string) {
  const named = effectOfKey(id, key);
  const fact = ORDER_EFFECT_FACTS.find((f) => f === named?.fact);
  return named && fact ? { fact, attempt: named.attempt } : undefined;
}

describe("order decider under any interleaving and duplication", () => {
  it("never moves a fact backwards, never starts an effect twice, and derives a consistent status", () => {
    // Runs in which a mail used up its attempts: the property must reach the last attempt.
    let spent = 0;
    fc.assert(
      fc.property(scriptArb, (script) => {
        let state = orderActor.initialState(id);
        const journal: OrderEvent[] = [];
        const started = new Set<string>();
        for (const command of script) {
          const mail = "key" in command ? mailOfKey(command.key) : undefined;
          let decision: ReturnType<typeof orderActor.decide>;
          try {
            decision = orderActor.decide(command, state, context(journal.length));
          } catch (error) {
            // Refusals are allowed only for outcomes of effects never requested (or placed twice);
            // an earlier attempt's straggler is never refused, or the dispatcher would retry it forever.
            expect(error).toBeInstanceOf(CommandRejectedError);
            if (mail) expect(mail.attempt).toBeGreaterThan(state[mail.fact].attempt);
            continue;
          }
          // Outcomes of an earlier attempt's key change nothing.
          if (mail && mail.attempt < state[mail.fact].attempt) expect(decision.events ?? []).toEqual([]);
          for (const effect of decision.effects ?? []) {
            expect(started.has(effect.key)).toBe(false);
            started.add(effect.key);
          }
          const before = state;
          for (const event of decision.events ?? []) {
            const old = state;
            state = orderActor.evolve(state, event);
            journal.push(event);
            for (const name of Object.keys(factsOf(state))) checkStep(name, old, state);
          }
          if (before.details) expect(state.details).toEqual(before.details);
          checkStatusConsistent(state);
        }
        // Replay from the journal gives the same state: recovery only runs evolve.
        expect(journal.reduce(orderActor.evolve, orderActor.initialState(id))).toEqual(state);
        // The mails started are exactly the attempts the state knows of, each under its own key.
        for (const fact of ORDER_EFFECT_FACTS) {
          const keys = Array.from({ length: state[fact].attempt }, (_, i) => attemptKey(id, fact, i + 1));
          expect([...started].filter((key) => mailOfKey(key)?.fact === fact)).toEqual(keys);
          if (state[fact].status === "Failed") spent++;
        }
      }),
      { numRuns: 400, seed: 20260101 },
    );
    expect(spent).toBeGreaterThan(0);
  });
});
