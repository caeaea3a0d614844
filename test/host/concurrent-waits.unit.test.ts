import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { HostStoppedError } from "../../src/errors.js";
import { createHost } from "../../src/index.js";
import { memoryJournal } from "../../src/testing/index.js";
import { type Checkout, checkout, paymentProvider } from "./fixtures/checkout.js";

/** Node warns (`MaxListenersExceededWarning`) past 10 'abort' listeners on one AbortSignal. */
let warnings: Error[] = [];
const onWarning = (warning: Error) => warnings.push(warning);
beforeEach(() => {
  warnings = [];
  process.on("warning", onWarning);
});
afterEach(() => {
  process.off("warning", onWarning);
});
/** A warning is emitted on a later tick than the listener that caused it. */
const settle = () => new Promise((resolve) => setTimeout(resolve, 20));
const listenerWarnings = () => warnings.filter((w) => w.name === "MaxListenersExceededWarning").map((w) => w.message);

const WAITS = 50;

describe(`${WAITS} concurrent waits on one host`, () => {
  it("add no listener warning, and all resolve", async () => {
    const host = createHost({ journal: memoryJournal(), actors: [checkout], handlers: [paymentProvider().handler] });
    await host.start();
    try {
      const waits = Array.from({ length: WAITS }, (_, i) =>
        host.waitFor<Checkout>(`checkout/${i % 5}`, (s) => s.payment === "Completed", { timeoutMs: 10_000 }),
      );
      await settle();
      for (let i = 0; i < 5; i++) await host.send(`checkout/${i}`, { type: "Checkout", amount: 100 + i });
      const states = await Promise.all(waits);
      expect(states.every(({ state }) => state.payment === "Completed")).toBe(true);
      await settle();
      expect(listenerWarnings()).toEqual([]);
    } finally {
      await host.stop();
    }
  });

  it("sharing one caller's AbortSignal add no listener warning, and all end with its reason", async () => {
    const host = createHost({ journal: memoryJournal(), actors: [checkout] });
    const caller = new AbortController();
    const waits = Array.from({ length: WAITS }, (_, i) =>
      host.waitForEffect(`never:${i}`, { timeoutMs: 10_000, signal: caller.signal }).then(
        () => "resolved",
        (error: unknown) => error,
      ),
    );
    await settle();
    caller.abort(new Error("caller gave up"));
    expect((await Promise.all(waits)).map((e) => (e as Error).message)).toEqual(Array(WAITS).fill("caller gave up"));
    await settle();
    expect(listenerWarnings()).toEqual([]);
    await host.stop();
  });

  it("all end with HostStoppedError when the host stops", async () => {
    const host = createHost({ journal: memoryJournal(), actors: [checkout] });
    const waits = Array.from({ length: WAITS }, (_, i) =>
      host.waitForEffect(`never:${i}`, { timeoutMs: 10_000 }).then(
        () => "resolved",
        (error: unknown) => error,
      ),
    );
    await settle();
    await host.stop();
    const ended = await Promise.all(waits);
    expect(ended.every((e) => e instanceof HostStoppedError)).toBe(true);
    await settle();
    expect(listenerWarnings()).toEqual([]);
  });
});
