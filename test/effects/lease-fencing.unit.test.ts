import { describe, expect, it } from "vitest";
import { memoryJournal } from "../../src/journal/memory.js";
import { FakePaymentProvider, paymentHandler } from "./fixtures/fake-provider.js";
import { paymentActor, paymentKey } from "./fixtures/payment-actor.js";
import { World } from "./fixtures/world.js";

describe("lease fencing", () => {
  it("a batch that stalls past its lease never runs a row its own dispatcher claimed again", async () => {
    // A provider that charges on every call: a second run of the key would be a second charge.
    const provider = new FakePaymentProvider(false);
    const world = new World(memoryJournal(), [paymentActor], [paymentHandler(provider)]);
    const { runtime, dispatcher, faults } = world.node;
    await runtime.send("order/o1", { type: "RequestPayment", amount: 500 });
    await runtime.send("order/o2", { type: "RequestPayment", amount: 700 });

    // The first batch claims both rows; its first row stalls before the handler call while every
    // lease expires and the same dispatcher instance claims both rows again in a second batch.
    // The first batch's other row is still running concurrently: it must not charge too.
    faults.arm("dispatch.beforeHandler", {
      action: async () => {
        world.clock.advance(dispatcher.leaseMs + 1);
        await dispatcher.runOnce();
      },
    });
    await dispatcher.runOnce();

    for (const order of ["o1", "o2"]) {
      expect(provider.chargesFor(paymentKey(order)), order).toBe(1);
      const events = await world.journal.readStream(`order/${order}`);
      expect(
        events.filter((e) => e.type === "PaymentCompleted"),
        order,
      ).toHaveLength(1);
    }
  });
});
