import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { FaultPoint } from "../../src/core/faults.js";
import { memoryJournal } from "../../src/journal/memory.js";
import { type ChargeBehaviour, FakePaymentProvider, paymentHandler } from "./fixtures/fake-provider.js";
import { type PaymentState, paymentActor, paymentKey } from "./fixtures/payment-actor.js";
import { World } from "./fixtures/world.js";

const points: FaultPoint[] = [
  "command.accepted",
  "commit.before",
  "commit.after",
  "dispatch.beforeHandler",
  "dispatch.afterProvider",
  "dispatch.outcomeCommitted",
];
const behaviours: ChargeBehaviour[] = ["ok", "charge-then-throw", "throw-before-charge", "charge-then-hang"];

/**
 * Property: whatever crashes happen where, and whatever the network does to the provider's
 * answers, a deduplicating provider charges each key once and the stream records one
 * PaymentCompleted. A non-deduplicating one is never charged twice either: it ends Completed,
 * or Unknown in the reconciliation queue, never double-charged.
 */
describe("crash anywhere (property)", () => {
  const crashes = fc.array(fc.record({ point: fc.constantFrom(...points), after: fc.nat(3) }), { maxLength: 4 });
  const script = fc.array(fc.constantFrom(...behaviours), { maxLength: 5 });

  for (const dedups of [true, false]) {
    it(`${dedups ? "deduplicating" : "non-deduplicating"} provider: never two charges, never two completions`, async () => {
      await fc.assert(
        fc.asyncProperty(crashes, script, fc.boolean(), async (plan, network, withLookup) => {
          const journal = memoryJournal();
          const provider = new FakePaymentProvider(dedups).plan(...network);
          const handler = paymentHandler(provider, {
            withLookup,
            policy: { timeoutMs: 1_000, leaseMs: 5_000, maxAttempts: 4, lookupAttempts: 2 },
          });
          const world = new World(journal, [paymentActor], [handler]);
          const address = "order/p";
          const key = paymentKey("p");
          const crashQueue = [...plan];
          const armNext = () => {
            const next = crashQueue.shift();
            if (next) world.node.faults.arm(next.point, { after: next.after });
          };
          armNext();
          for (let round = 0; round < 40; round++) {
            try {
              await world.node.runtime.send(address, { type: "RequestPayment", amount: 7 });
              const run = world.drain(50);
              await world.advanceUntilSettled(run, 500, 400);
              break;
            } catch {
              world.crash();
              armNext();
            }
          }
          world.node.faults.disarm();
          await world.advanceUntilSettled(world.drain(50), 500, 400);
          expect(provider.chargesFor(key)).toBeLessThanOrEqual(1);
          const events = await world.events(address);
          expect(events.filter((e) => e === "PaymentCompleted").length).toBeLessThanOrEqual(1);
          expect(events.filter((e) => e === "PaymentRequested")).toHaveLength(1);
          const state = await world.stateFromJournal<PaymentState>(address);
          const row = await journal.getOutbox(key);
          // Nothing is left hanging: Completed (recorded once), or visibly Unknown in the reconciliation queue.
          expect(["Completed", "Unknown"]).toContain(state.payment);
          if (state.payment === "Completed") {
            expect(provider.chargesFor(key)).toBe(1);
            expect(row?.status).toBe("done");
          } else {
            expect(row?.status).toBe("reconcile");
          }
          const ambiguous = network.filter((b) => b !== "ok").length + plan.length;
          if (dedups && ambiguous < 4) {
            // Fewer ambiguous answers than maxAttempts: retries with the same key reach a definite answer.
            expect(state.payment).toBe("Completed");
          }
          if (withLookup && provider.chargesFor(key) === 1) {
            // The provider has the charge: a lookup (or a run) must have found it.
            expect(state.payment).toBe("Completed");
          }
          expect(provider.calls.every((k) => k === key)).toBe(true);
        }),
        { numRuns: 60, seed: 20260101 },
      );
    });
  }
});
