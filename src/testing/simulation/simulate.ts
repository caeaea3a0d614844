import { createHash } from "node:crypto";
import { seededRandom } from "../../core/clock.js";
import { Reconciliation } from "../../effects/reconciliation.js";
import type { Settlement } from "../../effects/types.js";
import { BUILT_IN_INVARIANTS, replayEqualsLive } from "./invariants.js";
import { shrinkSteps } from "./shrink.js";
import { DEFAULT_WEIGHTS, FAULT_KINDS, formatSteps, generateSteps, type Step, type StepWeights } from "./steps.js";
import { type SimulationSystem, SimWorld } from "./world.js";

export interface SimulationOptions {
  seed: number;
  /** How many steps to generate from the seed, or the exact steps to run (a reproduction). */
  steps?: number | Step[];
  weights?: Partial<StepWeights>;
  /** Evict every actor after every step, so each step starts from replay. */
  alwaysRecover?: boolean;
  /** Also check replay-equals-live every N steps during the run (0: only at the end). */
  checkEvery?: number;
  /** Rounds of the calm phase before a workflow that makes no progress counts as stalled. */
  maxDrainRounds?: number;
  /** Look for a shorter failing step sequence when a violation is found (default true). */
  shrink?: boolean;
  /** Most re-runs the shrinker may spend. */
  shrinkBudget?: number;
}

export interface Violation {
  invariant: string;
  message: string;
}

export interface SimulationResult {
  seed: number;
  steps: Step[];
  /** Counts of injected faults and notable events, by type. */
  faults: Record<string, number>;
  /** Invariant evaluations performed. */
  checks: number;
  violations: Violation[];
  /** Digest of everything the run committed: equal for equal seeds and steps, on any machine. */
  fingerprint: string;
  /** The shortest failing step sequence found, when there was a violation. */
  shrunk?: Step[];
  /** One line that reproduces the (shrunk) run. */
  reproduce?: string;
}

/**
 * Run one seeded simulation: the seed chooses the workload and every step (deliveries, worker
 * turns, clock ticks, crashes, commit and provider faults, duplicates, pauses); then faults stop,
 * the world drains, and every invariant is checked. The same seed and steps give the same run.
 *
 * @example
 * const result = await simulate(mySystem, { seed: 42, steps: 300 });
 * if (result.violations.length) console.log(result.reproduce);
 */
export async function simulate(system: SimulationSystem, options: SimulationOptions): Promise<SimulationResult> {
  const weights: StepWeights = { ...DEFAULT_WEIGHTS, ...options.weights };
  const steps = Array.isArray(options.steps)
    ? options.steps
    : generateSteps(seededRandom(options.seed ^ 0x2545f491), options.steps ?? 200, weights);
  const outcome = await runSteps(system, options, steps);
  const result: SimulationResult = { seed: options.seed, steps, ...outcome };
  const first = outcome.violations[0];
  if (first) {
    const shrunk =
      options.shrink === false
        ? steps
        : await shrinkSteps(steps, options.shrinkBudget ?? 150, async (candidate) => {
            const rerun = await runSteps(system, options, candidate);
            return rerun.violations.some((v) => v.invariant === first.invariant);
          });
    result.shrunk = shrunk;
    const text = formatSteps(shrunk);
    result.reproduce =
      system.reproduce?.(options.seed, text) ??
      `simulate(${system.name}, { seed: ${options.seed}, steps: parseSteps("${text}") })`;
  }
  return result;
}

async function runSteps(
  system: SimulationSystem,
  options: SimulationOptions,
  steps: Step[],
): Promise<{ faults: Record<string, number>; checks: number; violations: Violation[]; fingerprint: string }> {
  const world = new SimWorld(system, options.seed);
  let checks = 0;
  const every = options.checkEvery ?? 0;
  for (let i = 0; i < steps.length; i++) {
    const step = steps[i] as Step;
    if (FAULT_KINDS.includes(step.kind)) world.count(`step:${step.kind}`);
    await world.run(step);
    if (options.alwaysRecover) world.runtime.evict();
    if (every > 0 && (i + 1) % every === 0) {
      checks++;
      for (const message of await replayEqualsLive.check(world)) {
        world.violations.push({ invariant: replayEqualsLive.name, message: `after step ${i + 1}: ${message}` });
      }
    }
  }
  await drain(world, options.maxDrainRounds ?? 2_000);
  for (const point of world.faults.fired) world.count(`fired:${point}`);
  for (const row of await world.journal.listOutbox({ category: "effect" }))
    world.count(`effect:${row.outcome ?? row.status}`);
  for (const provider of world.providers) {
    for (const e of provider.executions) world.count(e.performed ? "provider:performed" : "provider:deduplicated");
  }
  for (const invariant of [...BUILT_IN_INVARIANTS, ...(system.invariants ?? [])]) {
    checks++;
    for (const message of await invariant.check(world)) world.violations.push({ invariant: invariant.name, message });
  }
  return {
    faults: { ...world.counts },
    checks,
    violations: [...world.violations],
    fingerprint: await fingerprint(world),
  };
}

/**
 * Faults stop; deliver what is left, let workers run, settle what waits for an operator (as a
 * person would: by asking the provider), and jump the clock to the next due row. A world that
 * keeps open rows past the round budget is stalled.
 */
async function drain(world: SimWorld, maxRounds: number): Promise<void> {
  world.calm();
  for (let round = 0; round < maxRounds; round++) {
    while (world.pending.length > 0) await world.run({ kind: "deliver", pick: 0 });
    let progress = 0;
    for (let i = 0; i < world.workers.length; i++) progress += await world.work(i);
    if (progress > 0) continue;
    if ((await (world.system.operator ?? settleFromLedger)(world)) > 0) continue;
    const open = await world.journal.listOutbox({ status: ["pending", "resolving"] });
    if (open.length === 0) return;
    const due = Math.min(...open.map((row) => Math.max(row.notBefore, row.leaseUntil ?? 0)));
    world.clock.set(Math.max(world.clock.now() + 1, due));
  }
  const open = await world.journal.listOutbox({ status: ["pending", "resolving", "reconcile"] });
  world.violations.push({
    invariant: "no-stall",
    message: `still ${open.length} open outbox rows after ${maxRounds} calm rounds: ${open
      .slice(0, 5)
      .map((r) => `${r.id} (${r.status})`)
      .join(", ")}`,
  });
}

/** The default operator: settles each queued effect from the provider's own record of the key. */
async function settleFromLedger(world: SimWorld): Promise<number> {
  const reconciliation = new Reconciliation({ journal: world.journal, clock: world.clock });
  let settled = 0;
  for (const item of await reconciliation.list()) {
    const provider = world.providers.find((p) => p.kind === item.kind);
    const found = provider?.find(item.key) ?? { outcome: "not-found" as const };
    const settlement: Settlement =
      found.outcome === "succeeded"
        ? { outcome: "succeeded", result: found.result, by: "simulated-operator" }
        : {
            outcome: "failed",
            reason: found.outcome === "failed" ? found.reason : "the provider has no record of this key",
            by: "simulated-operator",
          };
    await reconciliation.settle(item.key, settlement);
    world.count("operator-settled");
    settled++;
  }
  return settled;
}

async function fingerprint(world: SimWorld): Promise<string> {
  const hash = createHash("sha256");
  for (const stream of await world.journal.listStreams("")) {
    hash.update(JSON.stringify(await world.journal.readStream(stream)));
  }
  hash.update(JSON.stringify(await world.journal.listOutbox()));
  for (const provider of world.providers) hash.update(JSON.stringify(provider.executions));
  return hash.digest("hex").slice(0, 16);
}
