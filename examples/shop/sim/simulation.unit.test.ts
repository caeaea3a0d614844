import { COVERAGE_KINDS, coverageOf, FAULT_POINTS, runSeeds, type SeedsReport } from "oncely/testing";
import { describe, expect, it } from "vitest";
import { SHOP_SIM_DEFAULTS, shopSimulation } from "./system.js";

/**
 * CI's fixed simulation budget for the reference shop (the long version: `npm run sim -- --seeds 5000`).
 * Each run checks every built-in invariant and the shop's own (one charge per paid order, money conserved).
 * Every run is bounded: a seed gets 5 s of wall clock, and each test stops starting seeds after
 * TOTAL_MS, so whatever the code under test does, the test reports instead of timing out.
 */
const TOTAL_MS = 200_000;
const TIMEOUT_MS = 240_000;

/**
 * The moments the outside world's steps must reach within the default budget (`act:<action>:<moment>`):
 * a cancel before the payment, between payment and picklist, with the picklist accepted and not
 * shipped, around the shipment (shipped, the order not told yet) and after it (refused), and after a
 * partial refund (the order reported short); a shortage reported before and after the shipment's
 * webhook, and again; a shipment whose webhook is lost for good (only the shipment's check tells).
 */
const ACT_MOMENTS = [
  "act:cancel:before-payment",
  "act:cancel:before-picklist",
  "act:cancel:before-shipment",
  "act:cancel:around-shipment",
  "act:cancel:after-shipment:refused",
  "act:cancel:again",
  "act:cancel:after-short-ship",
  "act:short-ship:before-shipment",
  "act:short-ship:after-shipment",
  "act:short-ship:again",
  "act:lose-webhook:lost",
];

const failuresOf = (report: SeedsReport) =>
  report.failures.map((f) => ({ seed: f.seed, world: f.world, violations: f.violations, reproduce: f.reproduce }));

describe("the shop under deterministic simulation", () => {
  it(
    "the seeded world (providers with and without dedup, small snapshot intervals, relay faults, cancels, short shipments): no violation over 150 seeds; the default budget exercises every coverage kind, fault point and cancel and short-ship moment",
    async () => {
      // Seeds 1..50 at 250 steps are `npm run sim`'s default budget: it must exercise every kind of
      // coverage and fire every fault point, or a bug on that path could pass it unseen.
      const defaultBudget: Record<string, number> = {};
      const report = await runSeeds(shopSimulation(), { count: 150, steps: 250, totalTimeMs: TOTAL_MS }, (result) => {
        if (result.seed > SHOP_SIM_DEFAULTS.seeds) return;
        for (const [name, n] of Object.entries(result.faults)) defaultBudget[name] = (defaultBudget[name] ?? 0) + n;
      });
      expect(failuresOf(report)).toEqual([]);
      expect(report.cut).toBeUndefined();
      expect(report.faults["effect:completed"]).toBeGreaterThan(0);
      expect(SHOP_SIM_DEFAULTS.steps).toBe(250);
      const coverage = coverageOf(defaultBudget);
      for (const kind of COVERAGE_KINDS) expect(coverage[kind], kind).toBeGreaterThan(0);
      for (const point of FAULT_POINTS) expect(defaultBudget[`fired:${point}`], point).toBeGreaterThan(0);
      for (const moment of ACT_MOMENTS) expect(defaultBudget[moment], moment).toBeGreaterThan(0);
      // Rows handed over at commit, and commits asking again for a key held while a dispatcher takes hand-overs.
      expect(defaultBudget["hand-over"], "hand-over").toBeGreaterThan(0);
      expect(defaultBudget["hand-over:key-held"], "hand-over:key-held").toBeGreaterThan(0);
    },
    TIMEOUT_MS,
  );

  it(
    "a payment provider with no idempotency, snapshots after every commit: ambiguous charges are never retried blindly, over 150 seeds",
    async () => {
      const report = await runSeeds(shopSimulation({ paymentDedups: false }), {
        first: 1000,
        count: 150,
        steps: 250,
        snapshotEvery: 1,
        totalTimeMs: TOTAL_MS,
      });
      expect(failuresOf(report)).toEqual([]);
      expect(report.cut).toBeUndefined();
    },
    TIMEOUT_MS,
  );

  it(
    "always-recover mode (every step starts from replay): no violation over 50 seeds",
    async () => {
      const report = await runSeeds(shopSimulation(), {
        first: 2000,
        count: 50,
        steps: 200,
        alwaysRecover: true,
        checkEvery: 25,
        totalTimeMs: TOTAL_MS,
      });
      expect(failuresOf(report)).toEqual([]);
      expect(report.cut).toBeUndefined();
    },
    TIMEOUT_MS,
  );
});
