import { describe, expect, it } from "vitest";
import { InvalidInputError } from "../../src/base/errors.js";
import { type Clock, SLEEP_CANCELLED, seededRandom, systemClock } from "../../src/core/clock.js";
import { Runtime } from "../../src/core/runtime.js";
import { Dispatcher } from "../../src/effects/dispatcher.js";
import { succeeded } from "../../src/effects/types.js";
import { memoryJournal } from "../../src/journal/memory.js";
import { cancelRecordingClock } from "../support/recording-clock.js";
import { FakePaymentProvider, paymentHandler } from "./fixtures/fake-provider.js";
import { paymentActor, paymentKey } from "./fixtures/payment-actor.js";

const until = async (check: () => Promise<boolean>, what: string) => {
  for (let i = 0; i < 500; i++) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 5));
  }
  throw new Error(`timed out waiting for ${what}`);
};

/** A started dispatcher whose poll interval is far longer than a test: only a wake-up explains a prompt run. */
function wakeOnlyDispatcher(clock: Clock = systemClock) {
  const journal = memoryJournal();
  const provider = new FakePaymentProvider(true);
  const runtime = new Runtime({ journal, actors: [paymentActor] });
  const dispatcher = new Dispatcher({
    journal,
    runtime,
    owner: "w1",
    handlers: [paymentHandler(provider)],
    pollIntervalMs: 3_600_000,
    clock,
    random: seededRandom(1),
  });
  dispatcher.start();
  return { journal, provider, runtime, dispatcher };
}

describe("Dispatcher lifecycle", () => {
  it("start() wakes on new outbox rows (no waiting for the poll), stop() ends the loop", async () => {
    const { journal, provider, runtime, dispatcher } = wakeOnlyDispatcher();
    await new Promise((r) => setTimeout(r, 20));
    await runtime.send("order/1", { type: "RequestPayment", amount: 5 });
    await until(async () => (await journal.getOutbox(paymentKey("1")))?.status === "done", "the effect to complete");
    await runtime.send("order/2", { type: "RequestPayment", amount: 5 });
    await until(async () => (await journal.getOutbox(paymentKey("2")))?.status === "done", "the second effect");
    await dispatcher.stop();
    expect(provider.calls).toEqual([paymentKey("1"), paymentKey("2")]);
    await runtime.send("order/3", { type: "RequestPayment", amount: 5 });
    await new Promise((r) => setTimeout(r, 30));
    expect((await journal.getOutbox(paymentKey("3")))?.status).toBe("pending");
  });

  it("cuts its idle sleep short with one constant reason, building no DOMException per wake-up", async () => {
    const { clock, reasons } = cancelRecordingClock();
    const { journal, dispatcher } = wakeOnlyDispatcher(clock);
    // Commands sent through another runtime (another process): their rows are not handed over at
    // commit, so the journal's notification has to wake the idle dispatcher.
    const elsewhere = new Runtime({ journal, actors: [paymentActor] });
    await new Promise((r) => setTimeout(r, 20));
    for (const order of ["1", "2"]) {
      await elsewhere.send(`order/${order}`, { type: "RequestPayment", amount: 5 });
      await until(async () => (await journal.getOutbox(paymentKey(order)))?.status === "done", `order ${order}`);
    }
    expect(reasons.length).toBeGreaterThanOrEqual(2); // woken twice
    await dispatcher.stop();
    expect(reasons.every((reason) => reason === SLEEP_CANCELLED)).toBe(true);
  });

  it("stop() aborts the signal of a running handler and waits for the row to be written back", async () => {
    const journal = memoryJournal();
    const runtime = new Runtime({ journal, actors: [paymentActor] });
    let aborted = false;
    let started = false;
    const dispatcher = new Dispatcher({
      journal,
      runtime,
      owner: "w1",
      clock: systemClock,
      handlers: [
        {
          kind: "payment",
          policy: { providerDedups: true, timeoutMs: 60_000, leaseMs: 120_000 },
          run: (_input, { signal }) =>
            new Promise((_, reject) => {
              started = true;
              signal.addEventListener("abort", () => {
                aborted = true;
                reject(signal.reason);
              });
            }),
        },
      ],
    });
    await runtime.send("order/9", { type: "RequestPayment", amount: 5 });
    dispatcher.start();
    await until(async () => started, "the handler to start");
    await dispatcher.stop();
    expect(aborted).toBe(true);
    const row = await journal.getOutbox(paymentKey("9"));
    // Ambiguous (stopped mid-call) and the provider dedups: scheduled for a retry with the same key, lease released.
    expect([row?.status, row?.attempts, row?.leaseOwner]).toEqual(["pending", 1, null]);
  });

  it("validates its options with messages naming the field", () => {
    const journal = memoryJournal();
    const runtime = new Runtime({ journal, actors: [paymentActor] });
    expect(() => new Dispatcher({ journal, runtime, owner: "" })).toThrow(/owner/);
    expect(() => new Dispatcher({ journal, runtime, owner: "w", batchSize: 0 })).toThrow(/batchSize/);
    const h = { kind: "x", run: async () => succeeded(1) };
    expect(() => new Dispatcher({ journal, runtime, owner: "w", handlers: [h, h] })).toThrow(InvalidInputError);
  });

  it("hands back rows of kinds it has no handler for, without calling anything", async () => {
    const journal = memoryJournal();
    const runtime = new Runtime({ journal, actors: [paymentActor] });
    const dispatcher = new Dispatcher({ journal, runtime, owner: "w", handlers: [], clock: systemClock });
    await runtime.send("order/5", { type: "RequestPayment", amount: 5 });
    expect(await dispatcher.runOnce()).toBe(1);
    const row = await journal.getOutbox(paymentKey("5"));
    expect([row?.status, row?.attempts, row?.leaseOwner]).toEqual(["pending", 0, null]);
    expect(row?.lastError).toMatch(/no handler registered for effect kind "payment"/);
  });
});

describe("message delivery retries", () => {
  it("a receiver that keeps failing (not a rejection) is retried with backoff, then the row goes dead, kept and visible", async () => {
    const { SimulatedClock } = await import("../../src/testing/clock.js");
    const { shippingOrderActor, picklistKey } = await import("./fixtures/picklist-actors.js");
    const journal = memoryJournal();
    const clock = new SimulatedClock();
    // The warehouse is not hosted by this runtime: every delivery fails with NotRegisteredError.
    const runtime = new Runtime({ journal, actors: [shippingOrderActor], clock });
    const dispatcher = new Dispatcher({
      journal,
      runtime,
      owner: "w",
      clock,
      random: seededRandom(3),
      messageRetry: { maxAttempts: 3, backoff: { initialMs: 100, maxMs: 1_000, multiplier: 2, jitter: 0 } },
    });
    await runtime.send("shipment/1", { type: "ShipOrder", lines: [{ sku: "a", qty: 1 }] });
    const key = picklistKey("1");
    expect(await dispatcher.runOnce()).toBe(1);
    expect(await journal.getOutbox(key)).toMatchObject({ status: "pending", attempts: 1 });
    expect(await dispatcher.runOnce()).toBe(0); // backing off
    clock.advance(100);
    expect(await dispatcher.runOnce()).toBe(1);
    clock.advance(200);
    expect(await dispatcher.runOnce()).toBe(1);
    const row = await journal.getOutbox(key);
    expect([row?.status, row?.attempts]).toEqual(["dead", 3]);
    expect(row?.lastError).toMatch(/NotRegisteredError/);
    expect((await journal.readStream("shipment/1")).map((e) => e.type)).toEqual(["PicklistRequested"]);
  });
});
