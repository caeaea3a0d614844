import { createHash } from "node:crypto";
import { seededRandom } from "../../core/clock.js";
import { Reconciliation } from "../../effects/reconciliation.js";
import type { Settlement } from "../../effects/types.js";
import { Budget, Stall } from "./budget.js";
import { BUILT_IN_INVARIANTS, replayEqualsLive } from "./invariants.js";
import { shrinkSteps } from "./shrink.js";
import { DEFAULT_WEIGHTS, FAULT_KINDS, formatSteps, generateSteps, type Step, type StepWeights } from "./steps.js";
import { ProcessDead, type SimulationSystem, SimWorld } from "./world.js";

export interface SimulationOptions {
  seed: number;
  /** How many steps to generate from the seed, or the exact steps to run (a reproduction). */
  steps?: number | Step[] | undefined;
  weights?: Partial<StepWeights> | undefined;
  /** Evict every actor after every step, so each step starts from replay. */
  alwaysRecover?: boolean | undefined;
  /** Also check replay-equals-live every N steps during the run (0: only at the end). */
  checkEvery?: number | undefined;
  /** Rounds of the calm phase before a workflow that makes no progress counts as stalled. */
  maxDrainRounds?: number | undefined;
  /** Look for a shorter failing step sequence when a violation is found (default true). */
  shrink?: boolean | undefined;
  /** Most re-runs the shrinker may spend. */
  shrinkBudget?: number | undefined;
  /** Fix the snapshot interval of every snapshotting actor instead of drawing it from the seed (1: always snapshot). */
  snapshotEvery?: number | undefined;
  /**
   * Wall-clock safety net per run, in ms (default 5,000): a run still busy after it (an await that
   * never resolves, work that grows without end) is cut and reported as a `no-stall` violation.
   */
  timeBudgetMs?: number | undefined;
  /** Wall-clock time the shrinker may spend in all, in ms (default 5,000). */
  shrinkTimeMs?: number | undefined;
}

export const DEFAULT_TIME_BUDGET_MS = 5_000;
export const DEFAULT_SHRINK_TIME_MS = 5_000;

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
  /** Set when the run was cut by its wall-clock budget: where it was. */
  stalled?: string;
  /** The world the seed drew (snapshot interval, which providers dedup). */
  world: string;
  /** Wall-clock time of the run, shrinking included (ms); only printed, never asserted on. */
  elapsedMs: number;
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
  ignoreAbandonedWork();
  const weights: StepWeights = { ...DEFAULT_WEIGHTS, ...system.weights, ...options.weights };
  const steps = Array.isArray(options.steps)
    ? options.steps
    : generateSteps(seededRandom(options.seed ^ 0x2545f491), options.steps ?? 200, weights, system.faultPoints);
  const started = performance.now();
  const outcome = await runSteps(system, options, steps);
  const result: SimulationResult = { seed: options.seed, steps, ...outcome, elapsedMs: 0 };
  const first = outcome.violations[0];
  if (first) {
    const shrinkUntil = performance.now() + (options.shrinkTimeMs ?? DEFAULT_SHRINK_TIME_MS);
    const shrunk =
      options.shrink === false
        ? steps
        : await shrinkSteps(steps, options.shrinkBudget ?? 150, async (candidate) => {
            // Out of shrinking time: every further candidate counts as passing, so ddmin stops reducing.
            const left = shrinkUntil - performance.now();
            if (left <= 0) return false;
            const budgetMs = Math.min(left, budgetOf(options));
            const rerun = await runSteps(system, { ...options, timeBudgetMs: budgetMs }, candidate);
            // Cut by what was left of the shrinking time, not by its own budget: not a stall of its own.
            if (rerun.stalled !== undefined && budgetMs < budgetOf(options)) return false;
            return rerun.violations.some((v) => v.invariant === first.invariant);
          });
    result.shrunk = shrunk;
    const text = formatSteps(shrunk);
    const flags = { alwaysRecover: options.alwaysRecover, snapshotEvery: options.snapshotEvery };
    result.reproduce =
      system.reproduce?.(options.seed, text, flags) ??
      `simulate(${system.name}, { seed: ${options.seed}, steps: parseSteps("${text}")${
        options.alwaysRecover ? ", alwaysRecover: true" : ""
      }${options.snapshotEvery ? `, snapshotEvery: ${options.snapshotEvery}` : ""} })`;
  }
  result.elapsedMs = performance.now() - started;
  return result;
}

async function runSteps(
  system: SimulationSystem,
  options: SimulationOptions,
  steps: Step[],
): Promise<{
  faults: Record<string, number>;
  checks: number;
  violations: Violation[];
  fingerprint: string;
  stalled?: string;
  world: string;
}> {
  const budget = new Budget(budgetOf(options));
  const world = new SimWorld(system, options.seed, { snapshotEvery: options.snapshotEvery, budget });
  // From the providers themselves: a system may pin a provider's dedup instead of taking the draw.
  const description = [
    `snapshot every ${world.draw.snapshotEvery}`,
    ...world.providers.map((p) => `${p.kind}: ${p.dedups ? "dedup" : "no dedup"}`),
  ].join("; ");
  let checks = 0;
  const every = options.checkEvery ?? 0;
  try {
    for (let i = 0; i < steps.length; i++) {
      const step = steps[i] as Step;
      if (FAULT_KINDS.includes(step.kind)) world.count(`step:${step.kind}`);
      // Raced against the budget: a step whose await never resolves is cut here, not by the test runner.
      await budget.race(world.run(step), `step ${i + 1} of ${steps.length} (${formatSteps([step])})`);
      world.restartIfDead();
      if (options.alwaysRecover) world.runtime.evict();
      if (every > 0 && (i + 1) % every === 0) {
        checks++;
        const where = `replay check after step ${i + 1}`;
        for (const message of await checkAlive(world, () => budget.race(replayEqualsLive.check(world), where))) {
          world.violations.push({ invariant: replayEqualsLive.name, message: `after step ${i + 1}: ${message}` });
        }
      }
    }
    await drain(world, options.maxDrainRounds ?? 2_000, budget);
    for (const point of world.faults.fired) world.count(`fired:${point}`);
    for (const row of await world.journal.listOutbox({ category: "effect" })) {
      world.count(`effect:${row.outcome ?? row.status}`);
      if (world.providers.find((p) => p.kind === row.kind)?.dedups === false) world.count("coverage:no-dedup-effect");
    }
    for (const provider of world.providers) {
      for (const e of provider.executions) world.count(e.performed ? "provider:performed" : "provider:deduplicated");
    }
    for (const invariant of [...BUILT_IN_INVARIANTS, ...(system.invariants ?? [])]) {
      checks++;
      const where = `invariant ${invariant.name}`;
      for (const message of await checkAlive(world, () => budget.race(invariant.check(world), where))) {
        world.violations.push({ invariant: invariant.name, message });
      }
    }
  } catch (error) {
    if (!(error instanceof Stall)) throw error;
    // Whatever the abandoned step still does runs against a dead process: nothing of it lands.
    world.kill();
    world.count("stall");
    world.violations.push({
      invariant: "no-stall",
      message: `run cut by its wall-clock budget of ${budget.ms} ms at ${error.where}`,
    });
    return {
      faults: { ...world.counts },
      checks,
      violations: [...world.violations],
      fingerprint: "",
      stalled: error.where,
      world: description,
    };
  }
  return {
    faults: { ...world.counts },
    checks,
    violations: [...world.violations],
    fingerprint: await fingerprint(world),
    world: description,
  };
}

const budgetOf = (options: SimulationOptions) => options.timeBudgetMs ?? DEFAULT_TIME_BUDGET_MS;

/**
 * Faults stop; deliver what is left, let workers run, settle what waits for an operator (as a
 * person would: by asking the provider), and jump the clock to the next due row. A world that
 * keeps open rows past the round budget is stalled.
 */
/**
 * Run a check against a live process. Work a step left running (a handler handed over at commit, a
 * log reader's delivery) may hit a crash point while the check reads: the check then meets a dead
 * process, which restarts, and the check runs again (the crash ended that work).
 */
async function checkAlive<T>(world: SimWorld, check: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    world.restartIfDead();
    try {
      return await check();
    } catch (error) {
      if (!(error instanceof ProcessDead) || attempt >= 5) throw error;
    }
  }
}

async function drain(world: SimWorld, maxRounds: number, budget: Budget): Promise<void> {
  world.calm();
  for (let round = 0; round < maxRounds; round++) {
    const where = `calm round ${round + 1}`;
    while (world.pending.length > 0) await budget.race(world.run({ kind: "deliver", pick: 0 }), where);
    let progress = 0;
    for (let i = 0; i < world.workers.length; i++) progress += await budget.race(world.work(i), where);
    if (progress > 0) continue;
    if ((await budget.race((world.system.operator ?? ((w: SimWorld) => settleFromLedger(w)))(world), where)) > 0)
      continue;
    const open = await world.journal.listOutbox({ status: ["pending", "resolving"] });
    if (open.length === 0) return;
    // Jump to the next row that becomes due in the future. A row that looks due already is blocked
    // (behind an earlier row of its stream that is backing off): stepping 1 ms at a time past
    // that backoff would spend the round budget and report a stall that is not there.
    const now = world.clock.now();
    const future = open.map((row) => Math.max(row.notBefore, row.leaseUntil ?? 0)).filter((due) => due > now);
    world.clock.set(future.length > 0 ? Math.min(...future) : now + 1);
  }
  const open = await world.journal.listOutbox({ status: ["pending", "resolving", "reconcile"] });
  world.violations.push({
    invariant: "no-stall",
    message: `step budget spent: still ${open.length} open outbox rows after ${maxRounds} calm rounds: ${open
      .slice(0, 5)
      .map((r) => `${r.id} (${r.status})`)
      .join(", ")}`,
  });
}

/**
 * What an operator finds when they look an effect up another way than by the provider's record of
 * its key; `undefined`: look that record up.
 */
export type OperatorLookup = (item: {
  kind: string;
  key: string;
  input: unknown;
}) =>
  | { outcome: "succeeded"; result: unknown }
  | { outcome: "failed"; reason: string }
  | { outcome: "not-found" }
  | undefined;

/**
 * The simulator's operator: settles each queued effect as a person would, from what they find when
 * they look it up (by default the provider's own record of the key; a system passes `find` for
 * effects with another way to ask, such as a read that leaves no record).
 */
export async function settleFromLedger(world: SimWorld, find?: OperatorLookup): Promise<number> {
  const reconciliation = new Reconciliation({ journal: world.journal, clock: world.clock });
  let settled = 0;
  for (const item of await reconciliation.list()) {
    const found =
      find?.(item) ??
      world.providers.find((p) => p.kind === item.kind)?.find(item.key) ??
      ({ outcome: "not-found" } as const);
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

let abandonedWorkIgnored = false;

/**
 * A run cut by its budget leaves its last step behind, still pending. When that step later fails
 * (with the Stall, or ProcessDead from its dead world) through a promise nobody awaits any more,
 * that rejection is expected and ignored; every other unhandled rejection is thrown as before.
 */
function ignoreAbandonedWork(): void {
  if (abandonedWorkIgnored) return;
  abandonedWorkIgnored = true;
  process.on("unhandledRejection", (reason) => {
    if (reason instanceof Stall || reason instanceof ProcessDead) return;
    throw reason;
  });
}
