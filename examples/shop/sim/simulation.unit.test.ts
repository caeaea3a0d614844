import { describe, expect, it } from "vitest";
import { runSeeds } from "../../../src/testing/simulation/run-seeds.js";
import { shopSimulation } from "./system.js";

/**
 * CI's fixed simulation budget for the reference shop (the long version: `npm run sim -- --seeds 5000`).
 * Each run checks every built-in invariant and the shop's own (one charge per paid order, money conserved).
 */
describe("the shop under deterministic simulation", () => {
  it("a provider that dedups by key: no violation over 400 seeds", async () => {
    const report = await runSeeds(shopSimulation(), { count: 400, steps: 250 });
    expect(report.failures.map((f) => ({ seed: f.seed, violations: f.violations, reproduce: f.reproduce }))).toEqual(
      [],
    );
    expect(report.faults["effect:completed"]).toBeGreaterThan(0);
  });

  it("a payment provider with no idempotency: ambiguous charges are never retried blindly, over 400 seeds", async () => {
    const report = await runSeeds(shopSimulation({ paymentDedups: false }), { first: 1000, count: 400, steps: 250 });
    expect(report.failures.map((f) => ({ seed: f.seed, violations: f.violations, reproduce: f.reproduce }))).toEqual(
      [],
    );
  });

  it("always-recover mode (every step starts from replay): no violation over 100 seeds", async () => {
    const report = await runSeeds(shopSimulation(), {
      first: 2000,
      count: 100,
      steps: 200,
      alwaysRecover: true,
      checkEvery: 25,
    });
    expect(report.failures.map((f) => ({ seed: f.seed, violations: f.violations, reproduce: f.reproduce }))).toEqual(
      [],
    );
  });
});
