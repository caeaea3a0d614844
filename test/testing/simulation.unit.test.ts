import { describe, expect, it } from "vitest";
import type { WorldDraw } from "../../src/testing/simulation/draw.js";
import { SimulatedProvider } from "../../src/testing/simulation/provider.js";
import { runSeeds } from "../../src/testing/simulation/run-seeds.js";
import { simulate } from "../../src/testing/simulation/simulate.js";
import { formatSteps, parseSteps } from "../../src/testing/simulation/steps.js";
import { checkoutActor, checkoutSystem } from "./fixtures/checkout.js";

describe("deterministic simulation", () => {
  it("finds no violation in a correct system, across seeds, with every kind of fault", async () => {
    const report = await runSeeds(checkoutSystem(), { count: 12, steps: 150 });
    expect(report.failures.map((f) => f.violations)).toEqual([]);
    expect(report.budgetViolations).toEqual([]); // every point it arms fires somewhere
    expect(report.checks).toBeGreaterThan(0);
    // The seeds really did inject faults of every kind.
    for (const kind of ["crash", "crash-at", "commit-fault", "provider-fault", "duplicate", "pause", "publish-fault"]) {
      expect(report.faults[`step:${kind}`], kind).toBeGreaterThan(0);
    }
  });

  it("holds for a provider that does not dedup: no key is ever performed twice", async () => {
    const report = await runSeeds(checkoutSystem({ dedups: false }), { count: 12, steps: 150 });
    expect(report.failures.map((f) => f.violations)).toEqual([]);
  });

  it("holds in always-recover mode, where every step starts from replay", async () => {
    const report = await runSeeds(checkoutSystem(), { count: 6, steps: 120, alwaysRecover: true, checkEvery: 10 });
    expect(report.failures.map((f) => f.violations)).toEqual([]);
  });

  it("the same seed reproduces the same run exactly", async () => {
    const a = await simulate(checkoutSystem(), { seed: 77, steps: 150 });
    const b = await simulate(checkoutSystem(), { seed: 77, steps: 150 });
    expect(b.fingerprint).toBe(a.fingerprint);
    expect(b.faults).toEqual(a.faults);
    const c = await simulate(checkoutSystem(), { seed: 78, steps: 150 });
    expect(c.fingerprint).not.toBe(a.fingerprint);
  });

  it("catches a key that includes the attempt number, and shrinks the failing run", async () => {
    const broken = checkoutSystem({ keyOf: (key, attempt) => `${key}:${attempt}` });
    const result = await simulate(broken, { seed: 5, steps: 150 });
    expect(result.violations.map((v) => v.invariant)).toContain("performed-at-most-once-per-requested-key");
    expect(result.violations.some((v) => /which no actor requested/.test(v.message))).toBe(true);
    expect(result.shrunk?.length).toBeLessThan(result.steps.length);
    expect(result.reproduce).toContain(`seed: 5`);
    // The shrunk sequence alone still fails.
    const again = await simulate(broken, {
      seed: 5,
      ...(result.shrunk ? { steps: result.shrunk } : {}),
      shrink: false,
    });
    expect(again.violations.length).toBeGreaterThan(0);
  });

  it("catches an effect performed from evolve (it runs again on every replay)", async () => {
    const provider = new SimulatedProvider<{ checkout: string; amount: number }, { id: string }>({
      kind: "side-channel",
      dedups: false,
      lookup: false,
      execute: (_i, _k, serial) => ({ outcome: "succeeded", result: { id: `x${serial}` } }),
    });
    const actor = checkoutActor({
      evolveSideEffect: (event) => {
        if (event.type === "Placed") provider.call(event.key, { checkout: event.key, amount: event.amount });
      },
    });
    const system = {
      ...checkoutSystem({ actor }),
      providers: (world: WorldDraw) => [...checkoutSystem().providers(world), provider],
    };
    const result = await simulate(system, { seed: 3, steps: 80, alwaysRecover: true, shrink: false });
    expect(result.violations.some((v) => /outside an effect handler/.test(v.message))).toBe(true);
  });

  it("step text round-trips, and bad step text is refused with the token named", () => {
    const text = "d12 u3 w4 t500 c x:dispatch.afterProvider ca cm p2:f p9:s z1";
    expect(formatSteps(parseSteps(text))).toBe(text);
    expect(() => parseSteps("d1 q7")).toThrow(/"q7"/);
    expect(() => parseSteps("x:nowhere")).toThrow(/unknown fault point/);
  });
});
