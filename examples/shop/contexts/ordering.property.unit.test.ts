import fc from "fast-check";
import type { Consumer, Envelope } from "oncely";
import { describe, expect, it } from "vitest";
import type { OrderState } from "../ordering/state.js";
import { deriveStatus } from "../ordering/status.js";
import { orderFacts } from "../views/order-views.js";
import { allConsumers, type OrderScript, placeOrder, produce, shopWorld, snapshot } from "./harness.js";

/**
 * Seed 2 with the shop's real contexts and consumers on the memory journal: the integration
 * events of many orders (produced by the real actors, in order) are delivered to every consumer in
 * a random interleaving, with duplicates, held back (delayed) and handled concurrently. The final
 * facts, derived statuses, order views, timelines, process states and requested effects must equal
 * those of in-order delivery; nothing is parked at the end; every event is applied exactly once.
 */

const scriptArb = (index: number): fc.Arbitrary<OrderScript> =>
  fc
    .record({
      payment: fc.constantFrom("paid", "paid", "declined", "attention-then-paid", "attention-then-declined"),
      shipBeforePicklistOutcome: fc.boolean(),
      lines: fc.array(
        fc.record({
          sku: fc.constantFrom("book", "pen", "lamp"),
          quantity: fc.integer({ min: 1, max: 3 }),
          unitPrice: fc.integer({ min: 1, max: 5000 }),
        }),
        { minLength: 1, maxLength: 3 },
      ),
    })
    .map(({ payment, shipBeforePicklistOutcome, lines }) => ({
      orderId: `o${index + 1}`,
      order: { type: "PlaceOrder", customerEmail: `c${index + 1}@example.com`, currency: "EUR", lines },
      payment: payment as OrderScript["payment"],
      shipBeforePicklistOutcome,
    }));

const scriptsArb = fc
  .integer({ min: 1, max: 4 })
  .chain((n) => fc.tuple(...Array.from({ length: n }, (_, i) => scriptArb(i))));

/** Per consumer: a permutation of the events, with some repeated, delivered in concurrent batches. */
const scheduleArb = (count: number) =>
  fc.record({
    order: fc.shuffledSubarray(
      Array.from({ length: count }, (_, i) => i),
      { minLength: count, maxLength: count },
    ),
    duplicates: fc.array(fc.tuple(fc.nat(count - 1), fc.nat(count)), { maxLength: count }),
    batch: fc.integer({ min: 1, max: 4 }),
  });

function schedule(events: Envelope[], s: { order: number[]; duplicates: [number, number][] }): Envelope[] {
  const out = s.order.map((i) => events[i] as Envelope);
  for (const [which, at] of s.duplicates) out.splice(at, 0, events[which] as Envelope);
  return out;
}

async function deliver(consumer: Consumer, events: readonly Envelope[], batch: number): Promise<void> {
  for (let i = 0; i < events.length; i += batch) {
    await Promise.all(events.slice(i, i + batch).map((e) => consumer.handle(e)));
  }
}

/** A consumer-side world: the orders placed through the API, then the events delivered as scheduled. */
async function consume(
  scripts: OrderScript[],
  events: Envelope[],
  plans: { events: Envelope[]; batch: number }[] | undefined,
) {
  const world = shopWorld();
  for (const script of scripts) await placeOrder(world, script);
  const consumers = allConsumers(world);
  // Consumers run side by side, each with its own delivery order, as durables on one broker do.
  await Promise.all(consumers.map((c, i) => deliver(c, plans?.[i]?.events ?? events, plans?.[i]?.batch ?? 1)));
  return { world, consumers };
}

describe("the shop's contexts under out-of-order, duplicated and delayed integration events", () => {
  it("end with the facts, statuses, views and timelines of in-order delivery", async () => {
    await fc.assert(
      fc.asyncProperty(
        scriptsArb,
        fc.array(scheduleArb(64), { minLength: 5, maxLength: 5 }),
        async (scripts, rawPlans) => {
          const { envelopes } = await produce(scripts);
          const expected = await consume(scripts, envelopes, undefined);
          const plans = rawPlans.map((p) => {
            // Schedules were drawn for up to 64 events: keep the indexes that exist.
            const n = envelopes.length;
            const order = p.order.filter((i) => i < n);
            const duplicates = p.duplicates.filter(([w]) => w < n) as [number, number][];
            return { events: schedule(envelopes, { order, duplicates }), batch: p.batch };
          });
          const actual = await consume(scripts, envelopes, plans);

          expect(await snapshot(actual.world)).toEqual(await snapshot(expected.world));
          for (const script of scripts) {
            const { state } = await actual.world.runtime.state<OrderState>(`order/${script.orderId}`);
            const { state: inOrder } = await expected.world.runtime.state<OrderState>(`order/${script.orderId}`);
            expect(deriveStatus(state)).toBe(deriveStatus(inOrder));
            // A shipped order is never shown as less than shipped, whatever arrived last.
            if (state.shipping.status === "Completed")
              expect(["shipped", "completed", "attention"]).toContain(deriveStatus(state));
          }
          expect(await orderFacts.readAll(actual.world.journal)).toEqual(
            await orderFacts.readAll(expected.world.journal),
          );
          // Nothing left parked; each event applied exactly once per consumer that takes it.
          expect(await actual.world.journal.listParked("order-timeline")).toEqual([]);
          for (const [i, consumer] of actual.consumers.entries()) {
            const reference = expected.consumers[i] as Consumer;
            expect(consumer.stats.applied + consumer.stats.released).toBe(
              reference.stats.applied + reference.stats.released,
            );
          }
          expect(await actual.world.journal.listDeadLetters({})).toEqual([]);
        },
      ),
      { numRuns: 100 },
    );
    // 100 runs of seven shop worlds each (one host apiece): past the default on a loaded machine.
  }, 90_000);

  it("the producers, run in order, end every order as the script says", async () => {
    const scripts = fc.sample(scriptsArb, { numRuns: 1, seed: 7 })[0] as OrderScript[];
    const { world } = await produce(scripts);
    for (const script of scripts) {
      const { state } = await world.runtime.state<OrderState>(`order/${script.orderId}`);
      const expected = script.payment.endsWith("paid") ? "completed" : "payment_failed";
      expect(deriveStatus(state)).toBe(expected);
    }
  });
});
