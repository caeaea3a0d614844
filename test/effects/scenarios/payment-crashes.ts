import { afterAll, beforeEach, describe, expect, it } from "vitest";
import { InjectedFault } from "../../../src/base/errors.js";
import type { Journal } from "../../../src/journal/types.js";
import { FakePaymentProvider, paymentHandler } from "../fixtures/fake-provider.js";
import type { JournalFactory } from "../fixtures/journals.js";
import { type PaymentState, paymentActor, paymentKey } from "../fixtures/payment-actor.js";
import { World } from "../fixtures/world.js";
import { nextOrderId } from "./ids.js";

/**
 * The seed's double-charge windows, each hit exactly with a fault point, against a provider that
 * dedups by key. In every case: exactly one charge per key at the provider, exactly one
 * PaymentCompleted in the stream.
 */
export function paymentCrashSuite(factory: JournalFactory): void {
  describe.skipIf(factory.skip !== "")(`payment crash windows on ${factory.name} ${factory.skip}`, () => {
    let journal: Journal;
    let provider: FakePaymentProvider;
    let world: World;
    let orderId: string;
    let address: string;
    let key: string;

    beforeEach(async () => {
      journal = await factory.create();
      provider = new FakePaymentProvider(true);
      world = new World(
        journal,
        [paymentActor],
        [paymentHandler(provider, { policy: { timeoutMs: 1_000, leaseMs: 5_000 } })],
      );
      orderId = nextOrderId();
      address = `order/${orderId}`;
      key = paymentKey(orderId);
    });
    afterAll(() => factory.teardown());

    const request = () => world.node.runtime.send(address, { type: "RequestPayment", amount: 4200 });

    async function expectExactlyOnce(): Promise<void> {
      expect(provider.chargesFor(key)).toBe(1);
      const events = await world.events(address);
      expect(events.filter((e) => e === "PaymentCompleted")).toHaveLength(1);
      const row = await journal.getOutbox(key);
      expect(row?.status).toBe("done");
      expect(row?.outcome).toBe("completed");
      const state = await world.stateFromJournal<PaymentState>(address);
      expect(state.payment).toBe("Completed");
      expect(state.paymentId).toBe(provider.charges.find((c) => c.key === key)?.paymentId);
    }

    it("commits intent and outbox row together; a second request with the same key is a no-op", async () => {
      await request();
      const again = await request();
      expect(again.reply).toEqual({ status: "Pending" });
      expect(await world.events(address)).toEqual(["PaymentRequested"]);
      const rows = await journal.listOutbox({ stream: address });
      expect(rows.map((r) => [r.id, r.category, r.kind, r.status])).toEqual([[key, "effect", "payment", "pending"]]);
      expect(provider.calls).toEqual([]); // nothing leaves before the dispatcher runs
      await world.drain();
      await expectExactlyOnce();
      const afterwards = await request();
      expect(afterwards.reply).toEqual({ status: "Completed", paymentId: "pay_1" });
      expect(await world.events(address)).toEqual(["PaymentRequested", "PaymentCompleted"]);
    });

    it("crash before the provider call: the next dispatcher runs it once", async () => {
      await request();
      world.node.faults.arm("dispatch.beforeHandler");
      await expect(world.node.dispatcher.runOnce()).rejects.toBeInstanceOf(InjectedFault);
      expect(provider.calls).toEqual([]);
      world.crash();
      await world.drain();
      await expectExactlyOnce();
      expect(provider.calls).toEqual([key]);
    });

    it("crash after the provider charged, before the outcome is recorded: same key again, no second charge", async () => {
      await request();
      world.node.faults.arm("dispatch.afterProvider");
      await expect(world.node.dispatcher.runOnce()).rejects.toBeInstanceOf(InjectedFault);
      expect(provider.chargesFor(key)).toBe(1);
      expect(await world.events(address)).toEqual(["PaymentRequested"]);
      world.crash();
      await world.drain();
      await expectExactlyOnce();
      expect(provider.calls).toEqual([key, key]); // the retry used the same key, never a new one
    });

    it("crash after the outcome committed (commit.after): the row is done in that same commit", async () => {
      await request();
      world.node.faults.arm("commit.after");
      await expect(world.node.dispatcher.runOnce()).rejects.toBeInstanceOf(InjectedFault);
      expect(await world.events(address)).toEqual(["PaymentRequested", "PaymentCompleted"]);
      expect((await journal.getOutbox(key))?.status).toBe("done");
      world.crash();
      await world.drain();
      expect(provider.calls).toEqual([key]);
      await expectExactlyOnce();
    });

    it("crash at dispatch.outcomeCommitted: a fresh dispatcher finds nothing to do", async () => {
      await request();
      world.node.faults.arm("dispatch.outcomeCommitted");
      await expect(world.node.dispatcher.runOnce()).rejects.toBeInstanceOf(InjectedFault);
      world.crash();
      expect(await world.node.dispatcher.runOnce()).toBe(0);
      expect(provider.calls).toEqual([key]);
      await expectExactlyOnce();
    });

    it("provider times out after charging: retried with the same key, answered from the provider's dedup", async () => {
      await request();
      provider.plan("charge-then-hang");
      const first = world.node.dispatcher.runOnce();
      await world.advanceUntilSettled(first, 250);
      expect(provider.chargesFor(key)).toBe(1);
      const row = await journal.getOutbox(key);
      expect(row?.status).toBe("pending");
      expect(row?.lastError).toMatch(/EffectTimeoutError/);
      await world.drain();
      await expectExactlyOnce();
      expect(provider.calls).toEqual([key, key]);
      expect(await world.events(address)).not.toContain("PaymentUnknown");
    });

    it("a duplicate outcome delivery changes nothing", async () => {
      await request();
      await world.drain();
      const duplicate = {
        type: "oncely.effect.succeeded" as const,
        key,
        kind: "payment",
        result: { id: "pay_forged" },
        attempt: 1,
        via: "lookup" as const,
      };
      const first = await world.node.runtime.send(address, duplicate);
      const second = await world.node.runtime.send(address, {
        ...duplicate,
        type: "oncely.effect.failed",
        error: "late",
      } as never);
      expect(first.duplicate).toBe(true);
      expect(second.duplicate).toBe(true);
      await expectExactlyOnce();
      expect((await world.stateFromJournal<PaymentState>(address)).paymentId).toBe("pay_1");
    });

    it("two dispatchers race for one row: only one claims it", async () => {
      await request();
      const other = world.boot();
      const [a, b] = await Promise.all([world.node.dispatcher.runOnce(), other.dispatcher.runOnce()]);
      expect(a + b).toBe(1);
      await expectExactlyOnce();
      expect(provider.calls).toEqual([key]);
    });

    it("a lease expires under a slow dispatcher: the second takes over with the same key, one charge, one event", async () => {
      await request();
      let release = () => {};
      provider.hold = new Promise<void>((resolve) => {
        release = resolve;
      });
      const slow = world.node.dispatcher.runOnce();
      // Let the slow dispatcher claim and enter the provider call.
      for (let i = 0; i < 400 && provider.calls.length === 0; i++) await new Promise((r) => setTimeout(r, 5));
      expect(provider.calls).toEqual([key]);
      world.clock.advance(world.node.dispatcher.leaseMs + 1);
      const fast = world.boot();
      expect(await fast.dispatcher.runOnce()).toBe(1);
      release();
      await slow.catch(() => {}); // it may time out on the simulated clock or answer late
      await world.drain();
      await expectExactlyOnce();
      expect(provider.calls).toEqual([key, key]);
    });
  });
}
