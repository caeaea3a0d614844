import { describe, expect, it, vi } from "vitest";
import { createRuntime } from "../../src/core/runtime.js";
import { type Ownership, sliceOfAddress } from "../../src/core/slices.js";
import { Dispatcher } from "../../src/effects/dispatcher.js";
import { MemoryJournal } from "../../src/journal/memory.js";
import { FakePaymentProvider, paymentHandler } from "../effects/fixtures/fake-provider.js";
import { paymentActor, paymentKey } from "../effects/fixtures/payment-actor.js";
import { shippingOrderActor, warehouseActor } from "../effects/fixtures/picklist-actors.js";

const SLICES = 8;

describe("hand-over at commit with an ownership", () => {
  it("still hands an owned slice's effect to the local dispatcher, and leaves a message to an actor owned elsewhere to its owner", async () => {
    const journal = new MemoryJournal({ sliceCount: SLICES });
    let id = "";
    for (let i = 0; ; i++) {
      id = `h${i}`;
      if (sliceOfAddress(`x/${id}`, SLICES) !== sliceOfAddress("warehouse/main", SLICES)) break;
    }
    const mine = sliceOfAddress(`x/${id}`, SLICES);
    const ownership: Ownership = {
      sliceCount: SLICES,
      owns: (slice) => slice === mine,
      fence: () => undefined,
      onChange: () => () => {},
    };
    const provider = new FakePaymentProvider(true);
    const runtime = createRuntime({ journal, actors: [paymentActor, shippingOrderActor, warehouseActor] });
    const dispatcher = new Dispatcher({
      journal,
      runtime,
      owner: "a",
      ownership,
      handlers: [paymentHandler(provider)],
      pollIntervalMs: 60_000,
    });
    dispatcher.start();
    try {
      await runtime.send(`order/${id}`, { type: "RequestPayment", amount: 500 });
      await vi.waitFor(() => expect(provider.calls).toEqual([paymentKey(id)]));
      expect(dispatcher.stats.handedOver).toBe(1);
      await runtime.send(`shipment/${id}`, { type: "ShipOrder", lines: [{ sku: "x", qty: 1 }] } as never);
      expect(dispatcher.stats.handedOver).toBe(1);
      const [message] = await journal.listOutbox({ category: "message" });
      expect(message).toMatchObject({ status: "pending", leaseOwner: null });
    } finally {
      await dispatcher.stop();
    }
  });
});
