import { describe, expect, it } from "vitest";
import { runSeeds } from "../../src/testing/simulation/index.js";
import { upgradeSimulation } from "./fixtures/sim-system.js";

describe("an upgrade among the simulator's faults", () => {
  it("release 2 deployed mid-run (with crashes, commit, provider and publish faults): no violation over 60 seeds", async () => {
    const report = await runSeeds(upgradeSimulation(), {
      count: 60,
      steps: 200,
      weights: { upgrade: 2 },
      totalTimeMs: 100_000,
    });
    expect(report.failures.map((f) => ({ seed: f.seed, violations: f.violations, reproduce: f.reproduce }))).toEqual(
      [],
    );
    expect(report.cut).toBeUndefined();
    expect(report.faults.upgrade).toBeGreaterThan(40);
    // Both kinds of order happened: placed before the upgrade (then finished by release 2) and after it.
    expect(report.faults["orders:placed-by-release-1"]).toBeGreaterThan(0);
    expect(report.faults["orders:placed-by-release-2"]).toBeGreaterThan(0);
  }, 120_000);
});
