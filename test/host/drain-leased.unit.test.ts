import { describe, expect, it } from "vitest";
import { createHost, type EffectHandler, succeeded } from "../../src/index.js";
import { memoryJournal } from "../../src/testing/index.js";
import { type Checkout, checkout } from "./fixtures/checkout.js";

/**
 * `drain()` counts a leased row as work in flight: a handler still running (here a row handed
 * over at its commit, leased to the host's dispatcher) keeps drain waiting until its outcome is
 * committed, never resolving while the effect is still Pending.
 */
describe("host.drain with a handler still running", () => {
  it("waits for the leased row's handler and its outcome's commit", async () => {
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let started: () => void = () => {};
    const inHandler = new Promise<void>((resolve) => {
      started = resolve;
    });
    const payment: EffectHandler<{ amount: number }, { id: string }> = {
      kind: "payment",
      policy: { providerDedups: true, timeoutMs: 60_000, leaseMs: 120_000 },
      run: async () => {
        started();
        await held;
        return succeeded({ id: "ch_1" });
      },
    };
    const host = createHost({ journal: memoryJournal(), actors: [checkout], handlers: [payment], name: "drain-1" });
    await host.start();
    try {
      await host.send("checkout/1", { type: "Checkout", amount: 100 }, { messageId: "c1" });
      await inHandler;
      let drainedWhile: Checkout["payment"] | "running" = "running";
      const drained = host.drain({ timeoutMs: 10_000 }).then(async () => {
        drainedWhile = (await host.state<Checkout>("checkout/1")).state.payment;
      });
      // Let drain look several times while the handler holds its row.
      for (let i = 0; i < 5; i++) await new Promise((resolve) => setTimeout(resolve, 10));
      expect(drainedWhile).toBe("running");
      release();
      await drained;
      expect(drainedWhile).toBe("Completed");
    } finally {
      release();
      await host.stop();
    }
  });
});
