/**
 * A flow is an ordinary actor: its generated decider is specified with `given`, the seeded
 * simulator holds every built-in invariant over it (crashes anywhere, commit and provider faults,
 * duplicates, lease takeovers), and after a crash between two steps it replays from its journal to
 * the state it had and carries on without running the finished step again.
 */
import { given, outcome, runSeeds, SimWorld, type Step, simulate } from "oncely/testing";
import { describe, expect, it } from "vitest";
import { charge, type RenewalState, receipt, renewal, renewalSystem } from "./fixtures/renewal-system.js";

const start = { type: "Renew", customer: "ada", amount: 900 } as const;
const chargeRequest = charge.request("renewal:r1:charge", { customer: "ada", amount: 900 });
const started = [
  { type: "FlowStarted", start },
  { type: "StepRequested", step: "charge" },
] as const;

describe("a flow under the decider specs", () => {
  it("a start requests the first step, keyed by the flow's id and the step", () => {
    given(renewal, [], { id: "r1" }).when(start).thenEffects([chargeRequest]);
    given(renewal, [], { id: "r1" })
      .when(start)
      .then([...started]);
  });

  it("a step's outcome records its result and requests the next step with it", () => {
    given(renewal, [...started], { id: "r1" })
      .when(outcome.succeeded(chargeRequest, { chargeId: "ch_1" }))
      .thenEffects([receipt.request("renewal:r1:receipt", { to: "ada", chargeId: "ch_1" })]);
  });

  it("an outcome delivered again after the step finished changes nothing", () => {
    const done = [...started, { type: "StepCompleted", step: "charge", result: { chargeId: "ch_1" } } as const];
    given(renewal, done, { id: "r1" })
      .when(outcome.succeeded(chargeRequest, { chargeId: "ch_1" }))
      .thenNothingHappened();
  });

  it("a failed step runs the failure branch and publishes why", () => {
    given(renewal, [...started], { id: "r1" })
      .when(outcome.failed(chargeRequest, "card declined"))
      .thenPublishes([
        {
          type: "RenewalDeclined",
          source: "billing",
          payload: { step: "charge", error: "card declined" },
          eventId: "renewal:r1:declined",
          aggregateId: "r1",
        },
      ]);
  });
});

describe("a flow under the seeded simulator", () => {
  it("holds every invariant over seeds, and each step is requested and finished once", async () => {
    // A generous wall-clock net per seed: a loaded CI machine must not turn a slow seed into a reported stall.
    const report = await runSeeds(renewalSystem(), { count: 10, steps: 150, timeBudgetMs: 30_000 });
    expect(report.failures.map((f) => f.violations)).toEqual([]);
    expect(report.budgetViolations).toEqual([]);
    // The runs did reach what they claim to test: crashes, providers that do not dedup, snapshots.
    expect(report.faults.crash).toBeGreaterThan(0);
    expect(report.coverage["no-dedup-effect"]).toBeGreaterThan(0);
    expect(report.coverage["snapshot-recovery"]).toBeGreaterThan(0);
    expect(report.faults["effect:failed"]).toBeGreaterThan(0); // declined charges: the failure branch ran
  });

  it("a seed replays the same run", async () => {
    const first = await simulate(renewalSystem(), { seed: 7, steps: 120 });
    const again = await simulate(renewalSystem(), { seed: 7, steps: 120 });
    expect(first.violations).toEqual([]);
    expect(again.fingerprint).toBe(first.fingerprint);
  });
});

describe("a flow after a crash between two steps", () => {
  const address = "renewal/1";
  const stateOf = async (world: SimWorld) => (await world.runtime.state(address)).state as RenewalState;
  /** Where a run without the crash stands once the charge finished: the state to come back to. */
  const reference = async () => {
    const world = new SimWorld(renewalSystem({ renewals: 1 }), 1);
    await world.run({ kind: "deliver", pick: 0 });
    await world.run({ kind: "work", pick: 0 });
    return stateOf(world);
  };

  // Two windows between the charge and the receipt: the charge's outcome committed (and with it the
  // receipt's request) with the dispatcher not done yet; and the receipt about to reach its provider.
  const crashes: Record<string, Step[]> = {
    "dispatch.outcomeCommitted": [
      { kind: "deliver", pick: 0 },
      { kind: "crash-at", point: "dispatch.outcomeCommitted" },
      { kind: "work", pick: 0 },
    ],
    "dispatch.beforeHandler": [
      { kind: "deliver", pick: 0 },
      { kind: "work", pick: 0 },
      { kind: "crash-at", point: "dispatch.beforeHandler" },
      { kind: "work", pick: 0 },
    ],
  };
  for (const [point, steps] of Object.entries(crashes)) {
    it(`crashed at ${point}: replays to the state it had, and the charge is never run again`, async () => {
      const expected = await reference();
      expect(expected).toMatchObject({ status: "Running", waiting: "receipt", results: { charge: {} } });
      const world = new SimWorld(renewalSystem({ renewals: 1 }), 1);
      for (const step of steps) await world.run(step);
      expect(world.counts.crash).toBe(1);
      expect(world.faults.fired).toEqual([point]);
      // A new process, rebuilt from the journal alone, stands where the run without the crash stood.
      expect(await stateOf(world)).toEqual(expected);

      for (let i = 0; i < 20 && (await stateOf(world)).status !== "Completed"; i++) {
        await world.run({ kind: "work", pick: i });
        await world.run({ kind: "tick", ms: 60_000 });
      }
      const final = await stateOf(world);
      expect(final.status).toBe("Completed");
      const [chargeProvider, receiptProvider] = world.providers;
      // Asked of the provider once in all: not even a deduplicated second call.
      expect(chargeProvider?.executions.map((e) => e.key)).toEqual(["renewal:1:charge"]);
      expect(receiptProvider?.performedFor("renewal:1:receipt")).toHaveLength(1);
      const events = (await world.journal.readStream(address, 1)).map((e) => e.type);
      expect(events.filter((t) => t === "StepRequested")).toHaveLength(2);
    });
  }
});
