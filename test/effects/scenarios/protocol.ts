import { afterAll, beforeEach, describe, expect, it } from "vitest";
import { IdempotencyKeyReusedError, InjectedFault } from "../../../src/base/errors.js";
import { Runtime } from "../../../src/core/runtime.js";
import { succeeded } from "../../../src/effects/types.js";
import { listEffects } from "../../../src/effects/view.js";
import type { Journal } from "../../../src/journal/types.js";
import { pruneInbox } from "../../../src/retention/inbox.js";
import { FakePaymentProvider, FakeRefundProvider, paymentHandler } from "../fixtures/fake-provider.js";
import type { JournalFactory } from "../fixtures/journals.js";
import { type PaymentState, paymentActor, paymentKey, refundKey } from "../fixtures/payment-actor.js";
import { picklistKey, reminderActor, shippingOrderActor, warehouseActor } from "../fixtures/picklist-actors.js";
import { World } from "../fixtures/world.js";
import { nextOrderId } from "./ids.js";

/** The rest of the protocol: timers, recovery, compensation, actor-to-actor delivery, inbox retention. */
export function protocolSuite(factory: JournalFactory): void {
  describe.skipIf(factory.skip !== "")(`effect protocol on ${factory.name} ${factory.skip}`, () => {
    let journal: Journal;
    let orderId: string;
    beforeEach(async () => {
      journal = await factory.create();
      orderId = nextOrderId();
    });
    afterAll(() => factory.teardown());

    it("an effect key from another commit is a no-op for the same request, an error for another stream or input", async () => {
      const key = `dup:${orderId}`;
      const row = { id: key, category: "effect" as const, kind: "payment", stream: `order/${orderId}`, notBefore: 0 };
      await journal.commit({ outbox: [{ ...row, payload: { input: 1 } }], now: 1 });
      await journal.commit({ outbox: [{ ...row, payload: { input: 1 } }], now: 2 });
      const reused = journal.commit({
        outbox: [{ ...row, stream: `order/${orderId}-b`, payload: { input: 2 } }],
        now: 2,
      });
      await expect(reused).rejects.toBeInstanceOf(IdempotencyKeyReusedError);
      const rows = await journal.listOutbox({ kind: "payment" });
      const mine = rows.filter((r) => r.id === key);
      expect(mine).toHaveLength(1);
      expect(mine[0]?.payload).toEqual({ input: 1 });
      expect(mine[0]?.stream).toBe(`order/${orderId}`);
    });

    it("a scheduled effect is a durable timer: not run before notBefore, run after, also across a crash", async () => {
      const calls: string[] = [];
      const reminder = {
        kind: "reminder",
        policy: { providerDedups: true, timeoutMs: 1_000, leaseMs: 5_000 },
        run: async (_: unknown, { idempotencyKey }: { idempotencyKey: string }) => {
          calls.push(idempotencyKey);
          return succeeded({ id: "sent" });
        },
      };
      const w = new World(journal, [reminderActor], [reminder]);
      const address = `reminder/${orderId}`;
      await w.node.runtime.send(address, { type: "ScheduleReminder", at: w.clock.now() + 60_000 });
      expect(await w.node.dispatcher.runOnce()).toBe(0);
      w.clock.advance(30_000);
      w.crash();
      expect(await w.node.dispatcher.runOnce()).toBe(0);
      w.clock.advance(30_000);
      expect(await w.node.dispatcher.runOnce()).toBe(1);
      expect(calls).toEqual([`reminder:${orderId}`]);
      expect(await w.events(address)).toEqual(["ReminderScheduled", "ReminderSent"]);
    });

    it("recovery only replays events: it never calls a handler", async () => {
      const provider = new FakePaymentProvider(true);
      const w = new World(journal, [paymentActor], [paymentHandler(provider)]);
      const address = `order/${orderId}`;
      await w.node.runtime.send(address, { type: "RequestPayment", amount: 10 });
      w.node.faults.arm("dispatch.afterProvider");
      await expect(w.node.dispatcher.runOnce()).rejects.toBeInstanceOf(InjectedFault);
      expect(provider.calls).toHaveLength(1);
      // Many recoveries of the actor: no calls, the state says Pending (intent recorded, outcome not).
      for (let i = 0; i < 3; i++) {
        const runtime = new Runtime({ journal, actors: [paymentActor], clock: w.clock });
        expect((await runtime.state<PaymentState>(address)).state.payment).toBe("Pending");
        runtime.close();
      }
      expect(provider.calls).toHaveLength(1);
      w.crash();
      await w.drain();
      expect(provider.chargesFor(paymentKey(orderId))).toBe(1);
      const again = new Runtime({ journal, actors: [paymentActor], clock: w.clock });
      expect((await again.state<PaymentState>(address)).state.payment).toBe("Completed");
      expect(provider.calls).toHaveLength(2);
    });

    it("a compensation (refund) is an effect of its own, with its own key and status", async () => {
      const provider = new FakePaymentProvider(true);
      const refunds = new FakeRefundProvider();
      const w = new World(journal, [paymentActor], [paymentHandler(provider), refunds.handler()]);
      const address = `order/${orderId}`;
      await w.node.runtime.send(address, { type: "RequestPayment", amount: 10 });
      await w.drain();
      await w.node.runtime.send(address, { type: "RefundPayment", reason: "customer cancelled" });
      await w.node.runtime.send(address, { type: "RefundPayment", reason: "clicked twice" });
      await w.drain();
      expect(refundKey(orderId)).not.toBe(paymentKey(orderId));
      expect(refunds.refunds).toEqual([{ key: refundKey(orderId), paymentId: "pay_1" }]);
      expect(provider.chargesFor(paymentKey(orderId))).toBe(1);
      expect(await w.events(address)).toEqual([
        "PaymentRequested",
        "PaymentCompleted",
        "RefundRequested",
        "RefundCompleted",
      ]);
      const state = await w.stateFromJournal<PaymentState>(address);
      expect([state.payment, state.refund]).toEqual(["Completed", "Completed"]);
      const views = await listEffects(journal, { owner: address });
      expect(views.map((v) => [v.key, v.kind, v.status])).toEqual([
        [paymentKey(orderId), "payment", "Completed"],
        [refundKey(orderId), "refund", "Completed"],
      ]);
      expect(await listEffects(journal, { owner: address, status: "Pending" })).toEqual([]);
      expect((await listEffects(journal, { owner: address, kind: "refund" })).map((v) => v.key)).toEqual([
        refundKey(orderId),
      ]);
    });

    it("actor-to-actor: delivered at least once, deduplicated by the receiver's inbox, acked after its commit", async () => {
      const w = new World(journal, [shippingOrderActor, warehouseActor], []);
      const address = `shipment/${orderId}`;
      await w.node.runtime.send(address, { type: "ShipOrder", lines: [{ sku: "a", qty: 1 }] });
      const warehouseBefore = (await journal.readStream("warehouse/main")).length;
      w.node.faults.arm("delivery.inboxRecorded");
      await expect(w.node.dispatcher.runOnce()).rejects.toBeInstanceOf(InjectedFault);
      // The receiver committed; the sender has not heard.
      expect(await journal.getInbox("warehouse/main", picklistKey(orderId))).toBeDefined();
      expect(await w.events(address)).toEqual(["PicklistRequested"]);
      w.crash();
      await w.drain();
      const created = (await journal.readStream("warehouse/main")).slice(warehouseBefore);
      expect(created.map((e) => e.type)).toEqual(["PicklistCreated"]);
      expect(await w.events(address)).toEqual(["PicklistRequested", "PicklistAccepted"]);
      const picklistId = (created[0]?.data as { picklistId: string } | undefined)?.picklistId;
      expect(picklistId).toBeDefined();
      expect((await journal.readStream(address)).at(-1)?.data).toMatchObject({ picklistId });
      const row = await journal.getOutbox(picklistKey(orderId));
      expect([row?.status, row?.outcome]).toEqual(["done", "delivered"]);
      expect(row?.attempts).toBe(2);
    });

    it("actor-to-actor: a terminal rejection by the receiver is reported to the sender, not retried", async () => {
      const w = new World(journal, [shippingOrderActor, warehouseActor], []);
      const address = `shipment/${orderId}`;
      await w.node.runtime.send(address, { type: "ShipOrder", lines: [] });
      await w.drain();
      expect(await w.events(address)).toEqual(["PicklistRequested", "PicklistRejected"]);
      const row = await journal.getOutbox(picklistKey(orderId));
      expect([row?.status, row?.outcome, row?.attempts]).toEqual(["done", "rejected", 1]);
    });

    it("inbox retention prunes only rows older than the window", async () => {
      const stream = `order/${orderId}`;
      const t0 = Date.UTC(2026, 0, 1);
      const day = 24 * 60 * 60_000;
      await journal.commit({ inbox: { consumer: stream, messageId: "old", reply: null }, now: t0 });
      await journal.commit({ inbox: { consumer: stream, messageId: "edge", reply: null }, now: t0 + day });
      await journal.commit({ inbox: { consumer: stream, messageId: "young", reply: null }, now: t0 + 5 * day });
      await pruneInbox(journal, { now: t0 + 8 * day, retentionMs: 7 * day });
      expect(await journal.getInbox(stream, "old")).toBeUndefined();
      expect(await journal.getInbox(stream, "edge")).toBeDefined(); // exactly at the window's start: kept
      expect(await journal.getInbox(stream, "young")).toBeDefined();
    });
  });
}
