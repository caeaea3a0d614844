import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { RuntimeClosedError, WaitTimeoutError } from "../../src/errors.js";
import { createHost, InProcessTransport, InvalidInputError } from "../../src/index.js";
import { type MemoryJournal, memoryJournal } from "../../src/testing/index.js";
import { type Checkout, checkout, paidView, paymentKey, paymentProvider } from "./fixtures/checkout.js";

/**
 * A read model whose commits take 30 ms (a slow database, say): the relay has long marked an
 * event published when its consumer commits, so only counting deliveries in hand tells drain.
 */
function slowDocuments(journal: MemoryJournal): MemoryJournal {
  const commit = journal.commit.bind(journal);
  journal.commit = async (work) => {
    if (work.documents) await new Promise((resolve) => setTimeout(resolve, 30));
    return commit(work);
  };
  return journal;
}

function shop() {
  const journal = slowDocuments(memoryJournal());
  const transport = new InProcessTransport();
  const provider = paymentProvider();
  const host = createHost({
    journal,
    actors: [checkout],
    handlers: [provider.handler],
    relay: { transport },
    consumers: [{ name: "paid-view", handler: paidView, subjects: ["oncely.>"] }],
    name: "shop-1",
  });
  return { journal, transport, provider, host };
}

describe("createHost", () => {
  it("runs effects, publishes their events and projects them; drain waits until the view is built", async () => {
    const { journal, transport, provider, host } = shop();
    await host.start();
    for (const id of ["1", "2", "3"]) {
      await host.send(`checkout/${id}`, { type: "Checkout", amount: id === "3" ? 50_000 : 100 }, { messageId: id });
    }
    await host.drain({ timeoutMs: 10_000 });
    // Drained: every effect settled, every event published, every delivery handled.
    expect(provider.charges.size).toBe(2);
    expect((await journal.getDocument("paid", "1"))?.doc).toEqual({ paymentId: "ch_1" });
    expect((await journal.getDocument("paid", "2"))?.doc).toEqual({ paymentId: "ch_2" });
    expect(await journal.getDocument("paid", "3")).toBeUndefined();
    expect((await host.state<Checkout>("checkout/3")).state.payment).toBe("Failed");
    expect(transport.stats.published).toBe(2);
    await host.stop();
  });

  it("names the dispatcher and the relay after the host, as lease owners", () => {
    const { host } = shop();
    expect(host.dispatcher.owner).toBe("shop-1/dispatcher");
    expect(host.consumers.map((c) => c.name)).toEqual(["paid-view"]);
  });

  it("drain times out naming the rows left, when nothing runs them", async () => {
    const { host } = shop(); // not started
    await host.send("checkout/9", { type: "Checkout", amount: 100 });
    const drained = host.drain({ timeoutMs: 100 });
    await expect(drained).rejects.toThrow(WaitTimeoutError);
    await expect(drained).rejects.toThrow(`effect payment ${paymentKey("9")} (pending)`);
    await host.stop();
  });

  it("stop stops everything once; the host cannot be started again", async () => {
    const { host } = shop();
    await host.start();
    await Promise.all([host.stop(), host.stop()]);
    const closed = host.send("checkout/1", { type: "Checkout", amount: 1 });
    await expect(closed).rejects.toThrow(RuntimeClosedError);
    await expect(closed).rejects.toThrow(/runtime is closed/);
    await expect(host.start()).rejects.toThrow(/was stopped; create a new one/);
  });

  it("work left at stop is done by the next host on the same journal", async () => {
    const { journal, transport, host } = shop();
    await host.send("checkout/5", { type: "Checkout", amount: 100 });
    await host.stop();
    const next = createHost({
      journal,
      actors: [checkout],
      handlers: [paymentProvider().handler],
      relay: { transport },
    });
    await next.start();
    const settled = await next.waitForEffect(paymentKey("5"), { timeoutMs: 5_000 });
    expect(settled.status).toBe("Completed");
    await next.drain({ timeoutMs: 5_000 });
    await next.stop();
  });

  it("refuses a consumer with no transport, naming it", () => {
    expect(() =>
      createHost({
        journal: memoryJournal(),
        actors: [checkout],
        consumers: [{ name: "orphan", handler: paidView, subjects: ["oncely.>"] }],
      }),
    ).toThrow(InvalidInputError);
    expect(() =>
      createHost({
        journal: memoryJournal(),
        actors: [checkout],
        consumers: [{ name: "orphan", handler: paidView, subjects: ["oncely.>"] }],
      }),
    ).toThrow(/consumer "orphan" has no transport/);
  });

  it("puts the metrics of every component it builds in the given registry", async () => {
    const registry = new Registry();
    const journal = memoryJournal();
    const host = createHost({
      journal,
      actors: [checkout],
      handlers: [paymentProvider().handler],
      relay: { transport: new InProcessTransport() },
      consumers: [{ name: "paid-view", handler: paidView, subjects: ["oncely.>"] }],
      name: "shop-1",
      registry,
    });
    await host.start();
    await host.send("checkout/1", { type: "Checkout", amount: 100 }, { messageId: "1" });
    await host.drain({ timeoutMs: 10_000 });
    await host.stop();
    const value = async (name: string, labels: Record<string, string>) => {
      const metric = await registry.getSingleMetric(name)?.get();
      return metric?.values.find((v) => Object.entries(labels).every(([k, l]) => v.labels[k] === l))?.value;
    };
    // The runtime's (a command and the effect's outcome), the dispatcher's, the relay's, the consumer's.
    expect(await value("oncely_commands_total", { actor: "checkout" })).toBe(2);
    expect(await value("oncely_effect_attempts_total", {})).toBeGreaterThan(0);
    expect(await value("oncely_relay_published_total", { relay: "shop-1/relay" })).toBe(1);
    expect(await value("oncely_consumer_messages_total", { consumer: "paid-view", outcome: "applied" })).toBe(1);
  });
});
