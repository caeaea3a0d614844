import { describe, expect, it } from "vitest";
import { createHost, InProcessTransport, InvalidInputError } from "../../src/index.js";
import { memoryJournal } from "../../src/testing/index.js";
import { checkout, paidView, paymentProvider } from "./fixtures/checkout.js";

describe("createHost({ transport })", () => {
  it('"journal": a relay and every consumer on the journal transport, from one option', async () => {
    const journal = memoryJournal();
    const provider = paymentProvider();
    const host = createHost({
      journal,
      actors: [checkout],
      handlers: [provider.handler],
      transport: "journal",
      consumers: [{ name: "paid-view", handler: paidView, subjects: ["oncely.>"] }],
    });
    expect(host.relay).toBeDefined();
    await host.start();
    await host.actor(checkout).send("1", { type: "Checkout", amount: 100 }, { messageId: "m1" });
    await host.drain({ timeoutMs: 10_000 });
    expect((await journal.getDocument("paid", "1"))?.doc).toEqual({ paymentId: "ch_1" });
    await host.stop();
  });

  it("a given transport serves the relay and the consumers; relay: false only consumes", async () => {
    const transport = new InProcessTransport();
    const consumers = [{ name: "paid-view", handler: paidView, subjects: ["oncely.>"] }];
    const both = createHost({ journal: memoryJournal(), actors: [checkout], transport, consumers });
    expect(both.relay).toBeDefined();
    const consuming = createHost({ journal: memoryJournal(), actors: [checkout], transport, relay: false, consumers });
    expect(consuming.relay).toBeUndefined();
    expect(() => createHost({ journal: memoryJournal(), actors: [checkout], consumers })).toThrow(InvalidInputError);
    await both.stop();
    await consuming.stop();
  });
});
