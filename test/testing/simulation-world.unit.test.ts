import { describe, expect, it } from "vitest";
import type { Envelope } from "../../src/messaging/envelope.js";
import { unexercised } from "../../src/testing/simulation/coverage.js";
import { drawWorld } from "../../src/testing/simulation/draw.js";
import { runSeeds } from "../../src/testing/simulation/run-seeds.js";
import { simulate } from "../../src/testing/simulation/simulate.js";
import { parseSteps } from "../../src/testing/simulation/steps.js";
import {
  PublishAckLost,
  type PublishFault,
  PublishRefused,
  simulatedTransport,
} from "../../src/testing/simulation/transport.js";
import type { SimEnv, SimulationSystem } from "../../src/testing/simulation/world.js";
import { checkoutSystem } from "./fixtures/checkout.js";

/** The checkout system plus one worker that misbehaves the way a planted bug would. */
function withWorker(runOnce: (env: SimEnv) => () => Promise<number>): SimulationSystem {
  const base = checkoutSystem();
  return {
    ...base,
    name: "checkout-with-a-stuck-worker",
    workers: (env) => [...base.workers(env), { name: "stuck", runOnce: runOnce(env) }],
  };
}

describe("the seeded world", () => {
  it("draws providers that dedup and providers that do not, and small snapshot intervals, the same for the same seed", () => {
    const draws = Array.from({ length: 40 }, (_, i) => drawWorld(i + 1));
    const dedup = draws.map((d) => d.dedups("payment"));
    expect(dedup).toContain(true);
    expect(dedup).toContain(false);
    const intervals = new Set(draws.map((d) => d.snapshotEvery));
    expect(intervals.has(1)).toBe(true);
    expect(Math.max(...intervals)).toBeLessThanOrEqual(6);
    expect(drawWorld(7).dedups("payment")).toBe(drawWorld(7).dedups("payment"));
    expect(drawWorld(7).snapshotEvery).toBe(drawWorld(7).snapshotEvery);
    expect(drawWorld(7, { snapshotEvery: 1 }).snapshotEvery).toBe(1);
    expect(() => drawWorld(7, { snapshotEvery: 0 })).toThrow(/snapshotEvery/);
  });

  it("the seed decides the checkout provider's dedup, and both kinds of run stay correct", async () => {
    const report = await runSeeds(checkoutSystem(), { count: 12, steps: 120 });
    expect(report.failures.map((f) => f.violations)).toEqual([]);
    expect(report.coverage["no-dedup-effect"]).toBeGreaterThan(0);
    expect(report.coverage["snapshot-recovery"]).toBeGreaterThan(0);
    expect(report.coverage["lease-takeover"]).toBeGreaterThan(0);
    // The checkout system has no relay and no sequenced consumer: the report says so.
    expect(unexercised(report.faults)).toEqual(["relay-publish-failure", "parked-release"]);
  });
});

describe("the simulated transport", () => {
  const envelope = { eventId: "e1" } as Envelope;
  const run = async (fault: PublishFault | undefined) => {
    const accepted: string[] = [];
    const counts: string[] = [];
    const env = { publishFault: () => fault, count: (name: string) => counts.push(name) } as unknown as SimEnv;
    const transport = simulatedTransport(env, (e) => accepted.push(e.eventId));
    const error = await transport.publish(envelope, "s").then(
      () => undefined,
      (e: unknown) => e,
    );
    return { accepted, counts, error };
  };

  it("fails before storing, stores but reports failure, or stores twice, on the seed's order", async () => {
    expect(await run(undefined)).toEqual({ accepted: ["e1"], counts: [], error: undefined });
    const refused = await run("fail");
    expect(refused.accepted).toEqual([]);
    expect(refused.error).toBeInstanceOf(PublishRefused);
    const lost = await run("lost-ack");
    expect(lost.accepted).toEqual(["e1"]);
    expect(lost.error).toBeInstanceOf(PublishAckLost);
    expect(lost.counts).toEqual(["coverage:relay-publish-failure"]);
    expect((await run("duplicate")).accepted).toEqual(["e1", "e1"]);
  });

  it("publish-fault steps round-trip as text", () => {
    expect(parseSteps("r:f r:a r:d").map((s) => (s.kind === "publish-fault" ? s.mode : s.kind))).toEqual([
      "fail",
      "lost-ack",
      "duplicate",
    ]);
    expect(() => parseSteps("r:x")).toThrow(/"r:x"/);
  });
});

describe("bounded runs", () => {
  it("a step whose await never resolves is cut by the budget and reported as a stall, shrunk, with its reproduction", async () => {
    const system = withWorker(() => () => new Promise<number>(() => {}));
    const result = await simulate(system, { seed: 3, steps: 80, timeBudgetMs: 150, shrinkTimeMs: 1_500 });
    expect(result.stalled).toMatch(/^step \d+ of 80 \(w\d+\)$/);
    expect(result.violations).toEqual([{ invariant: "no-stall", message: expect.stringMatching(/150 ms at step/) }]);
    expect(result.shrunk?.length).toBeLessThan(result.steps.length);
    expect(result.reproduce).toContain("seed: 3");
  });

  it("a loop that only awaits journal calls (and would starve a timer) is cut at its next journal call", async () => {
    const system = withWorker((env) => async () => {
      for (;;) await env.journal.listStreams("");
    });
    const result = await simulate(system, { seed: 4, steps: 40, timeBudgetMs: 150, shrink: false });
    expect(result.violations.map((v) => v.invariant)).toEqual(["no-stall"]);
  });

  it("a run of seeds stops when its own budget is spent, and says so", async () => {
    const system = withWorker(() => () => new Promise<number>(() => {}));
    const report = await runSeeds(system, {
      count: 1_000,
      steps: 40,
      timeBudgetMs: 50,
      shrink: false,
      totalTimeMs: 400,
    });
    expect(report.cut).toMatch(/wall-clock budget of 400 ms spent (during seed \d+, )?after \d+ of 1000 seeds/);
    expect(report.seeds).toBeLessThan(1_000);
    expect(report.failures.every((f) => f.stalled !== undefined)).toBe(true);
  });
});
