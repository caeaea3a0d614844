import { describe, expect, it } from "vitest";
import { systemClock } from "../../src/core/clock.js";
import { Dispatcher } from "../../src/effects/dispatcher.js";
import { simulate } from "../../src/testing/simulation/simulate.js";
import { checkoutSystem } from "./fixtures/checkout.js";

describe("a simulated run whose workers ignore the simulator's clock", () => {
  it("fails with clock-injected, naming env.clock", async () => {
    const system = checkoutSystem({ dedups: true });
    system.workers = (env) => {
      const dispatcher = new Dispatcher({
        journal: env.journal,
        runtime: env.runtime,
        handlers: env.handlers,
        owner: `g${env.generation}-d1`,
        clock: systemClock, // the mistake: not env.clock
        random: env.random,
        faults: env.faults,
      });
      return [{ name: dispatcher.owner, runOnce: () => dispatcher.runOnce() }];
    };
    const result = await simulate(system, { seed: 7, steps: 40, shrink: false });
    const wiring = result.violations.filter((v) => v.invariant === "clock-injected");
    expect(wiring).toHaveLength(1);
    expect(wiring[0]?.message).toMatch(/env\.clock/);
  });

  it("passes the same system wired to env.clock", async () => {
    const result = await simulate(checkoutSystem({ dedups: true }), { seed: 7, steps: 40, shrink: false });
    expect(result.violations.filter((v) => v.invariant === "clock-injected")).toEqual([]);
  });
});
