import { afterAll, describe, expect, it, vi } from "vitest";
import { FakePaymentProvider, paymentHandler } from "./fixtures/fake-provider.js";
import { type JournalFactory, memoryFactory, postgresFactory, sqliteFactory } from "./fixtures/journals.js";
import { paymentActor, paymentKey } from "./fixtures/payment-actor.js";
import { World } from "./fixtures/world.js";

/**
 * Effects handed over at commit, on every back end: the intent's commit inserts the row leased to
 * the local started dispatcher, which runs it from memory with no claim. If the process dies
 * before the handler runs, nobody else touches the row until its lease ends; then another
 * dispatcher takes it over and calls the provider once, with the same key.
 */
const factories: JournalFactory[] = [memoryFactory(), await sqliteFactory(), await postgresFactory("hand_over")];
afterAll(async () => {
  for (const factory of factories) await factory.teardown();
});

let orders = 0;

for (const factory of factories) {
  describe.skipIf(factory.skip !== "")(`effects handed over at commit: ${factory.name}`, () => {
    it("runs the effect from memory after its commit, with no claim", async () => {
      const journal = await factory.create();
      const claim = vi.spyOn(journal, "claimOutbox");
      const provider = new FakePaymentProvider(true);
      const world = new World(journal, [paymentActor], [paymentHandler(provider)]);
      const { runtime, dispatcher } = world.node;
      const order = `h${++orders}`;
      dispatcher.start();
      const claimsAtStart = claim.mock.calls.length;
      try {
        await runtime.send(`order/${order}`, { type: "RequestPayment", amount: 500 });
        await vi.waitFor(async () => expect(await world.events(`order/${order}`)).toContain("PaymentCompleted"));
      } finally {
        await dispatcher.stop();
      }
      expect(provider.calls).toEqual([paymentKey(order)]);
      expect(dispatcher.stats.handedOver).toBe(1);
      // The start-up claim found nothing; the hand-over needed no other (the simulated clock never moved).
      expect(claim.mock.calls.length).toBe(claimsAtStart);
      expect(await journal.getOutbox(paymentKey(order))).toMatchObject({ status: "done", outcome: "completed" });
    });

    it("never calls the handler for a handed-over row whose lease ran out before it started", async () => {
      const journal = await factory.create();
      const provider = new FakePaymentProvider(true);
      // Started (so it takes hand-overs), with a poll that never comes within the test.
      const world = new World(journal, [paymentActor], [paymentHandler(provider)], { pollIntervalMs: 1e9 });
      const { dispatcher } = world.node;
      dispatcher.start();
      const order = `s${++orders}`;
      // The row as the runtime would insert it for this dispatcher, first attempt recorded.
      const row = {
        id: paymentKey(order),
        category: "effect" as const,
        kind: "payment",
        stream: `order/${order}`,
        payload: { input: { orderId: order, amount: 500 } },
        notBefore: world.clock.now(),
      };
      const lease = dispatcher.lease(row, world.clock.now());
      expect(lease).toMatchObject({ attempts: 1 });
      const { inserted } = await journal.commit({ outbox: [{ ...row, lease }], now: world.clock.now() });
      const stored = await journal.getOutbox(row.id);
      // The process stalls past the lease; another dispatcher claims the row.
      world.clock.advance(dispatcher.leaseMs + 1);
      const claimed = await journal.claimOutbox({
        owner: "other#1",
        now: world.clock.now(),
        leaseMs: 60_000,
        limit: 9,
      });
      expect(claimed.map((r) => r.id)).toEqual([row.id]);
      // The stalled hand-over finally runs: its lease is over, so it must not call the provider.
      expect(inserted).toHaveLength(1);
      dispatcher.take([stored as NonNullable<typeof stored>]);
      await dispatcher.stop();
      expect(provider.calls).toEqual([]);
      expect(dispatcher.stats.leaseLost).toBe(1);
    });

    it("runs handed-over rows within the dispatcher's concurrency: rows over it wait, leased, for a slot", async () => {
      const journal = await factory.create();
      const provider = new FakePaymentProvider(true);
      const base = paymentHandler(provider);
      let running = 0;
      let most = 0;
      const gates: (() => void)[] = [];
      const handler: typeof base = {
        ...base,
        async run(input, context) {
          running++;
          most = Math.max(most, running);
          await new Promise<void>((resolve) => gates.push(resolve));
          try {
            return await base.run(input, context);
          } finally {
            running--;
          }
        },
      };
      const world = new World(journal, [paymentActor], [handler], { concurrency: 2, pollIntervalMs: 1e9 });
      const { runtime, dispatcher } = world.node;
      const claim = vi.spyOn(journal, "claimOutbox");
      dispatcher.start();
      const claimsAtStart = claim.mock.calls.length;
      const placed = [1, 2, 3, 4, 5].map(() => `c${++orders}`);
      try {
        for (const order of placed) await runtime.send(`order/${order}`, { type: "RequestPayment", amount: 500 });
        await vi.waitFor(() => expect(gates).toHaveLength(2));
        // Five rows handed over, two running; the others wait in memory, still leased to us.
        expect(dispatcher.stats.handedOver).toBe(5);
        for (const order of placed) {
          expect(await journal.getOutbox(paymentKey(order))).toMatchObject({
            leaseOwner: expect.stringMatching(/^dispatcher-1#/),
          });
        }
        for (let released = 0; released < placed.length; released++) {
          await vi.waitFor(() => expect(gates.length).toBeGreaterThan(released));
          gates[released]?.();
        }
        for (const order of placed) {
          await vi.waitFor(async () => expect(await world.events(`order/${order}`)).toContain("PaymentCompleted"));
        }
      } finally {
        for (const gate of gates) gate();
        await dispatcher.stop();
      }
      expect(most).toBe(2);
      expect(provider.calls.sort()).toEqual(placed.map(paymentKey).sort());
      // No claim was needed: every row ran from its hand-over.
      expect(claim.mock.calls.length).toBe(claimsAtStart);
    });

    for (const dedups of [true, false]) {
      it(`lets another dispatcher take over a handed-over effect whose process died before the handler, after the lease, once (provider dedups: ${dedups})`, async () => {
        const journal = await factory.create();
        const provider = new FakePaymentProvider(dedups);
        const world = new World(journal, [paymentActor], [paymentHandler(provider)]);
        const { runtime, dispatcher, faults } = world.node;
        const order = `d${++orders}`;
        // The process dies between the intent's commit and the handler call.
        faults.arm("dispatch.beforeHandler");
        dispatcher.start();
        try {
          await runtime.send(`order/${order}`, { type: "RequestPayment", amount: 500 });
          await vi.waitFor(() => expect(faults.fired).toContain("dispatch.beforeHandler"));
        } finally {
          await dispatcher.stop();
        }
        expect(dispatcher.stats.handedOver).toBe(1);
        expect(provider.calls).toEqual([]);
        const row = await journal.getOutbox(paymentKey(order));
        expect(row).toMatchObject({ status: "pending", leaseOwner: expect.stringMatching(/^dispatcher-1#/) });

        // Another process: the row is not claimable while the dead process's lease lasts.
        const other = world.boot();
        expect(await other.dispatcher.runOnce()).toBe(0);
        world.clock.advance(dispatcher.leaseMs + 1);
        world.node = other;
        await world.drain();

        expect(provider.calls).toEqual([paymentKey(order)]);
        expect(provider.chargesFor(paymentKey(order))).toBe(1);
        expect((await world.events(`order/${order}`)).filter((e) => e === "PaymentCompleted")).toHaveLength(1);
      });
    }
  });
}
