import { describe, expect, it } from "vitest";
import { type EffectHandler, failed, notPerformed, Relay, succeeded } from "../../src/index.js";
import { ProviderTimeout, ProviderUnavailable, SimulatedProvider } from "../../src/testing/simulation/provider.js";
import { runSeeds } from "../../src/testing/simulation/run-seeds.js";
import { simulatedTransport } from "../../src/testing/simulation/transport.js";
import { type SimulationSystem, SimWorld } from "../../src/testing/simulation/world.js";
import { checkoutSystem } from "./fixtures/checkout.js";

type ChargeInput = { checkout: string; amount: number };

/** A user's real handler, talking to an in-process fake of their bank (counting its calls). */
function realChargeHandler() {
  const bank = { calls: 0 };
  const handler: EffectHandler<ChargeInput, { id: string }> = {
    kind: "charge",
    policy: { providerDedups: true, timeoutMs: 1_000, leaseMs: 5_000, rerunAfterNotFoundMs: 60_000, lookupAttempts: 3 },
    run: async (input, { idempotencyKey }) => {
      bank.calls++;
      if (input.amount % 7 === 0) return failed("card declined");
      return succeeded({ id: `bank_${idempotencyKey}` });
    },
  };
  return { bank, handler };
}

const context = (key: string) => ({
  idempotencyKey: key,
  attempt: 1,
  kind: "charge",
  owner: "checkout/1",
  signal: new AbortController().signal,
});

describe("SimulatedProvider.around: simulated faults around a real handler", () => {
  it("fails before the handler runs, or times out after it acted, and records what it did", async () => {
    const { bank, handler } = realChargeHandler();
    const provider = SimulatedProvider.around(handler, { dedups: false, lookup: true });
    const run = provider.handler().run;

    provider.injectFault("fail");
    await expect(run({ checkout: "1", amount: 5 }, context("k1"))).rejects.toThrow(ProviderUnavailable);
    expect(bank.calls).toBe(0);

    provider.injectFault("succeed-then-timeout");
    await expect(run({ checkout: "1", amount: 5 }, context("k1"))).rejects.toThrow(ProviderTimeout);
    expect(bank.calls).toBe(1);
    expect(provider.performedFor("k1")).toHaveLength(1);
    expect(provider.find("k1")).toEqual({ outcome: "succeeded", result: { id: "bank_k1" } });

    // Without dedup, a second call with the key performs again: the ledger shows it twice.
    await run({ checkout: "1", amount: 5 }, context("k1"));
    expect(provider.performedFor("k1")).toHaveLength(2);
  });

  it("with dedup, a key seen before gets the stored answer without calling the handler again", async () => {
    const { bank, handler } = realChargeHandler();
    const provider = SimulatedProvider.around(handler, { dedups: true });
    expect(provider.handler().policy?.providerDedups).toBe(true);
    const run = provider.handler().run;
    expect(await run({ checkout: "2", amount: 14 }, context("k2"))).toEqual(failed("card declined"));
    expect(await run({ checkout: "2", amount: 14 }, context("k2"))).toEqual(failed("card declined"));
    expect(bank.calls).toBe(1);
    expect(provider.executions.map((e) => e.performed)).toEqual([true, false]);
  });

  it("records nothing for a 'not performed' answer", async () => {
    const provider = SimulatedProvider.around<ChargeInput, { id: string }>(
      { kind: "charge", run: async () => notPerformed("503 before acting") },
      { dedups: false },
    );
    expect(await provider.handler().run({ checkout: "3", amount: 1 }, context("k3"))).toMatchObject({
      outcome: "not-performed",
    });
    expect(provider.executions).toEqual([]);
  });

  it("holds every invariant over seeds, with the world drawing dedup, and the real handler really ran", async () => {
    const real = realChargeHandler();
    const system: SimulationSystem = {
      ...checkoutSystem({ orders: 12 }),
      providers: (world) => [SimulatedProvider.around(real.handler, { dedups: world.dedups("charge"), lookup: true })],
    };
    delete system.handlers; // each provider's own handler: the real one inside the simulated faults
    const report = await runSeeds(system, { count: 8, steps: 120 });
    expect(report.failures.map((f) => f.violations)).toEqual([]);
    expect(report.budgetViolations).toEqual([]);
    expect(real.bank.calls).toBeGreaterThan(0);
  });
});

describe("workers and fault points", () => {
  it("takes a Dispatcher or a Relay as a worker as it is, named after its lease owner", async () => {
    const world = new SimWorld(checkoutSystem(), 1);
    expect(world.workers.map((w) => w.name)).toEqual(["g1-d1", "g1-d2"]);
    const published: string[] = [];
    const withRelay: SimulationSystem = {
      ...checkoutSystem(),
      workers: (env) => [
        new Relay({
          journal: env.journal,
          transport: simulatedTransport(env, (envelope) => published.push(envelope.eventId)),
          owner: `g${env.generation}-relay`,
          clock: env.clock,
          random: env.random,
          faults: env.faults,
        }),
      ],
    };
    const relayWorld = new SimWorld(withRelay, 1);
    expect(relayWorld.workers.map((w) => w.name)).toEqual(["g1-relay"]);
    expect(await relayWorld.work(0)).toBe(0); // it runs: nothing to publish yet
  });

  it("a budget of seeds in which a reachable point was armed and never fired fails, naming the point", async () => {
    // 12 orders keep commits and effects coming all run long, so every point the fixture
    // reaches fires somewhere in a few seeds (with a workload that ends early, a point armed late
    // in every seed never fires: the budget must fit the workload).
    const declared = checkoutSystem({ orders: 12 });
    // The fixture has no relay: a system claiming to reach relay.published arms it in vain.
    const system: SimulationSystem = { ...declared, faultPoints: [...(declared.faultPoints ?? []), "relay.published"] };
    const report = await runSeeds(system, { count: 6, steps: 120 });
    expect(report.faults["crash-at:relay.published"]).toBeGreaterThan(0);
    expect(report.failures).toEqual([]); // no single seed is wrong...
    expect(report.budgetViolations.map((v) => v.invariant)).toEqual(["armed-fault-points-fire"]);
    expect(report.budgetViolations[0]?.message).toMatch(/never fired over 6 seeds: relay\.published\./);
    expect(report.violations).toBe(1); // ...but the budget is
  });

  it("a system that declares no points is held to all of them; one that declares its own passes", async () => {
    const { faultPoints: _reachable, ...undeclared } = checkoutSystem({ orders: 12 });
    const failing = await runSeeds(undeclared, { count: 6, steps: 120 });
    expect(failing.budgetViolations[0]?.message).toMatch(/consumer\.checkpointStored|relay\./);
    const passing = await runSeeds(checkoutSystem({ orders: 12 }), { count: 6, steps: 120 });
    expect(passing.budgetViolations).toEqual([]);
    expect(passing.faults["crash-at:relay.published"]).toBeUndefined(); // only declared points are armed
  });
});
