import { afterAll, beforeEach, describe, expect, it } from "vitest";
import { InjectedFault, InvalidInputError } from "../../../src/base/errors.js";
import { EffectNotFoundError, EffectNotSettleableError } from "../../../src/effects/errors.js";
import { Reconciliation } from "../../../src/effects/reconciliation.js";
import type { EffectPolicy } from "../../../src/effects/types.js";
import { listEffects } from "../../../src/effects/view.js";
import type { Journal } from "../../../src/journal/types.js";
import { FakePaymentProvider, paymentHandler } from "../fixtures/fake-provider.js";
import type { JournalFactory } from "../fixtures/journals.js";
import { type PaymentState, paymentActor, paymentKey } from "../fixtures/payment-actor.js";
import { World } from "../fixtures/world.js";
import { nextOrderId } from "./ids.js";

const basePolicy: Partial<EffectPolicy> = {
  timeoutMs: 1_000,
  leaseMs: 5_000,
  lookupAttempts: 3,
  lookupBackoff: { initialMs: 1_000, maxMs: 10_000, multiplier: 2, jitter: 0.5 },
};

/**
 * A provider that does NOT dedup: an ambiguous run is never retried blindly. It goes Unknown,
 * then resolves by lookup, or lands in the reconciliation queue for an operator.
 */
export function noDedupSuite(factory: JournalFactory): void {
  describe.skipIf(factory.skip !== "")(`non-deduplicating provider on ${factory.name} ${factory.skip}`, () => {
    let journal: Journal;
    let provider: FakePaymentProvider;
    let orderId: string;
    let address: string;
    let key: string;

    beforeEach(async () => {
      journal = await factory.create();
      provider = new FakePaymentProvider(false);
      orderId = nextOrderId();
      address = `order/${orderId}`;
      key = paymentKey(orderId);
    });
    afterAll(() => factory.teardown());

    const world = (policy: Partial<EffectPolicy> = {}, withLookup = true) =>
      new World(
        journal,
        [paymentActor],
        [paymentHandler(provider, { policy: { ...basePolicy, ...policy }, withLookup })],
      );

    it("charged but the response was lost: Unknown, then settled Completed by lookup, never run twice", async () => {
      const w = world();
      await w.node.runtime.send(address, { type: "RequestPayment", amount: 100 });
      provider.plan("charge-then-throw");
      expect(await w.node.dispatcher.runOnce()).toBe(1);
      expect(await w.events(address)).toEqual(["PaymentRequested", "PaymentUnknown"]);
      expect((await journal.getOutbox(key))?.status).toBe("resolving");
      expect((await listEffects(journal, { status: "Unknown" })).map((e) => e.key)).toContain(key);
      await w.drain();
      expect(provider.calls).toEqual([key]);
      expect(provider.chargesFor(key)).toBe(1);
      expect(await w.events(address)).toEqual(["PaymentRequested", "PaymentUnknown", "PaymentCompleted"]);
      const stream = await journal.readStream(address);
      expect(stream.at(-1)?.data).toMatchObject({ type: "PaymentCompleted", via: "lookup", paymentId: "pay_1" });
      expect((await w.stateFromJournal<PaymentState>(address)).payment).toBe("Completed");
      expect((await listEffects(journal, { owner: address }))[0]).toMatchObject({ key, status: "Completed" });
    });

    it("a crash after the provider acted: the next dispatcher does not run again, it looks up", async () => {
      const w = world();
      await w.node.runtime.send(address, { type: "RequestPayment", amount: 100 });
      w.node.faults.arm("dispatch.afterProvider");
      await expect(w.node.dispatcher.runOnce()).rejects.toBeInstanceOf(InjectedFault);
      w.crash();
      await w.drain();
      expect(provider.calls).toEqual([key]);
      expect(provider.chargesFor(key)).toBe(1);
      expect(await w.events(address)).toEqual(["PaymentRequested", "PaymentUnknown", "PaymentCompleted"]);
    });

    it("nothing found after its lookup budget: reconciliation queue, then an operator's settlement is an event", async () => {
      const w = world();
      await w.node.runtime.send(address, { type: "RequestPayment", amount: 100 });
      provider.plan("throw-before-charge");
      await w.drain();
      expect(provider.calls).toEqual([key]); // never retried blindly
      expect(await w.events(address)).toEqual(["PaymentRequested", "PaymentUnknown", "PaymentNeedsReconciliation"]);
      const row = await journal.getOutbox(key);
      expect(row?.status).toBe("reconcile");
      const queue = new Reconciliation({ journal, clock: w.clock });
      const items = await queue.list({ owner: address });
      expect(items).toHaveLength(1);
      expect(items[0]).toMatchObject({
        key,
        status: "Unknown",
        needsReconciliation: true,
        input: { orderId, amount: 100 },
      });
      expect(await queue.count()).toBeGreaterThanOrEqual(1);

      await queue.settle(key, {
        outcome: "failed",
        reason: "no charge at the bank statement",
        by: "alice",
        note: "ticket 7",
      });
      // Durable on the row, not yet an event: the owner hears it from the dispatcher.
      expect(await w.events(address)).not.toContain("PaymentFailed");
      await w.drain();
      expect(provider.calls).toEqual([key]); // the settlement never calls the handler
      const last = (await journal.readStream(address)).at(-1)?.data;
      expect(last).toMatchObject({
        type: "PaymentFailed",
        via: "operator",
        settledBy: "alice",
        reason: "no charge at the bank statement",
      });
      expect((await w.stateFromJournal<PaymentState>(address)).payment).toBe("Failed");
      expect((await journal.getOutbox(key))?.status).toBe("done");
      expect(await queue.list({ owner: address })).toEqual([]);
    });

    it("without lookup an ambiguous run goes straight to reconciliation; a success settlement completes it", async () => {
      const w = world({}, false);
      await w.node.runtime.send(address, { type: "RequestPayment", amount: 100 });
      provider.plan("charge-then-throw");
      await w.drain();
      expect(await w.events(address)).toEqual(["PaymentRequested", "PaymentUnknown", "PaymentNeedsReconciliation"]);
      const queue = new Reconciliation({ journal, clock: w.clock });
      const settled = await queue.settle(key, { outcome: "succeeded", result: { id: "pay_1" }, by: "bob" });
      expect(settled.status).toBe("Unknown"); // until the owner records it
      await w.drain();
      expect(provider.calls).toEqual([key]);
      expect(provider.chargesFor(key)).toBe(1);
      expect((await journal.readStream(address)).at(-1)?.data).toMatchObject({
        type: "PaymentCompleted",
        paymentId: "pay_1",
        via: "operator",
        settledBy: "bob",
      });
      expect((await listEffects(journal, { owner: address }))[0]?.status).toBe("Completed");
      await expect(queue.settle(key, { outcome: "failed", reason: "x", by: "bob" })).rejects.toBeInstanceOf(
        EffectNotSettleableError,
      );
    });

    it("lookup proves the key unseen after a quiet period: one more run with the same key is safe", async () => {
      const w = world({ rerunAfterNotFoundMs: 2_000 });
      await w.node.runtime.send(address, { type: "RequestPayment", amount: 100 });
      provider.plan("throw-before-charge");
      await w.drain();
      expect(provider.calls).toEqual([key, key]);
      expect(provider.chargesFor(key)).toBe(1);
      expect(await w.events(address)).toEqual(["PaymentRequested", "PaymentUnknown", "PaymentCompleted"]);
    });

    it("a lookup API that stays down: the effect waits in the queue, never silently dropped", async () => {
      const w = world();
      await w.node.runtime.send(address, { type: "RequestPayment", amount: 100 });
      provider.plan("charge-then-throw");
      provider.lookupDown = true;
      await w.drain();
      const row = await journal.getOutbox(key);
      expect(row?.status).toBe("reconcile");
      expect(row?.lastError).toMatch(/lookup failed/);
      expect(provider.chargesFor(key)).toBe(1);
      expect(provider.calls).toEqual([key]);
    });

    it("an operator may settle only Unknown effects, with a valid settlement", async () => {
      const w = world();
      const queue = new Reconciliation({ journal, clock: w.clock });
      await expect(queue.settle(`${key}-nope`, { outcome: "failed", reason: "x", by: "a" })).rejects.toBeInstanceOf(
        EffectNotFoundError,
      );
      await w.node.runtime.send(address, { type: "RequestPayment", amount: 100 });
      await expect(queue.settle(key, { outcome: "failed", reason: "x", by: "a" })).rejects.toBeInstanceOf(
        EffectNotSettleableError,
      );
      await expect(queue.settle(key, { outcome: "failed", reason: "x", by: " " })).rejects.toBeInstanceOf(
        InvalidInputError,
      );
    });
  });
}
