import cliProgress from "cli-progress";
import { Command, InvalidArgumentError } from "commander";
import { COVERAGE_KINDS, coverageOf, parseSteps, runSeeds, type SeedsReport, simulate } from "oncely/testing";
import { SHOP_SIM_DEFAULTS, shopSimulation } from "./system.js";

/**
 * `npm run sim -- --seeds N`: the shop under deterministic simulation. Prints seeds, simulated
 * steps, faults by type, coverage counters, invariant checks and violations; exits 1 on any
 * violation (a stall included), printing the shrunk reproduction. `--json` prints the report as
 * one JSON object instead (the mutation check reads it).
 */
// The simulator injects thousands of faults on purpose; the warnings they cause would drown its
// report. Silenced explicitly here (set ONCELY_LOG_LEVEL=warn to see them); read at first use.
process.env.ONCELY_LOG_LEVEL ??= "silent";

const integer = (name: string, min: number) => (value: string) => {
  const n = Number(value);
  if (!Number.isInteger(n) || n < min)
    throw new InvalidArgumentError(`${name} must be an integer >= ${min}, got "${value}"`);
  return n;
};

const program = new Command()
  .name("sim")
  .description("run the reference shop under deterministic simulation")
  .option("--seeds <n>", "how many seeds to run", integer("--seeds", 1), SHOP_SIM_DEFAULTS.seeds)
  .option("--first <n>", "first seed", integer("--first", 0), 1)
  .option("--steps <n>", "steps per seed", integer("--steps", 1), SHOP_SIM_DEFAULTS.steps)
  .option("--orders <n>", "orders per seed", integer("--orders", 1))
  .option("--seed <n>", "run this one seed (with --replay: exactly these steps)", integer("--seed", 0))
  .option("--replay <steps>", "step text printed by a failing run")
  .option("--payment-no-dedup", "the payment provider never dedups by key (default: the seed draws it)")
  .option("--all-dedup", "every provider dedups by key (default: the seed draws each)")
  .option("--always-recover", "evict every actor after every step")
  .option("--always-snapshot", "every snapshotting actor snapshots after every commit (--snapshot-every 1)")
  .option(
    "--snapshot-every <n>",
    "fix the snapshot interval (default: the seed draws it)",
    integer("--snapshot-every", 1),
  )
  .option(
    "--time-budget-ms <n>",
    "wall-clock budget per seed before it counts as a stall",
    integer("--time-budget-ms", 1),
  )
  .option("--shrink-time-ms <n>", "wall-clock time the shrinker may spend on a failure", integer("--shrink-time-ms", 0))
  .option("--stop-at-first-failure", "stop at the first failing seed")
  .option("--json", "print the report as JSON")
  .showHelpAfterError();

const options = program.parse().opts<{
  seeds: number;
  first: number;
  steps: number;
  orders?: number;
  seed?: number;
  replay?: string;
  paymentNoDedup?: boolean;
  allDedup?: boolean;
  alwaysRecover?: boolean;
  alwaysSnapshot?: boolean;
  snapshotEvery?: number;
  timeBudgetMs?: number;
  shrinkTimeMs?: number;
  stopAtFirstFailure?: boolean;
  json?: boolean;
}>();
if (options.replay !== undefined && options.seed === undefined) program.error("--replay needs --seed");
if (options.alwaysSnapshot && options.snapshotEvery !== undefined && options.snapshotEvery !== 1) {
  program.error("--always-snapshot and --snapshot-every disagree");
}

const system = shopSimulation({
  orders: options.orders,
  paymentDedups: options.paymentNoDedup ? false : undefined,
  allDedup: options.allDedup,
});
const run = {
  alwaysRecover: options.alwaysRecover,
  snapshotEvery: options.alwaysSnapshot ? 1 : options.snapshotEvery,
  timeBudgetMs: options.timeBudgetMs,
  shrinkTimeMs: options.shrinkTimeMs,
};
let report: SeedsReport;
if (options.seed !== undefined) {
  const steps = options.replay === undefined ? options.steps : parseSteps(options.replay);
  const result = await simulate(system, { seed: options.seed, steps, ...run });
  report = {
    seeds: 1,
    steps: result.steps.length,
    faults: result.faults,
    coverage: coverageOf(result.faults),
    checks: result.checks,
    violations: result.violations.length,
    failures: result.violations.length ? [result] : [],
    // Judged over a budget of seeds, never one seed: a replay has none.
    budgetViolations: [],
    elapsedMs: result.elapsedMs,
  };
} else {
  const bar =
    process.stdout.isTTY && !options.json
      ? new cliProgress.SingleBar(
          { format: "seeds {bar} {value}/{total} | violations {violations}" },
          cliProgress.Presets.shades_classic,
        )
      : undefined;
  let violations = 0;
  bar?.start(options.seeds, 0, { violations });
  report = await runSeeds(
    system,
    {
      first: options.first,
      count: options.seeds,
      steps: options.steps,
      stopAtFirstFailure: options.stopAtFirstFailure,
      ...run,
    },
    (result) => {
      violations += result.violations.length;
      bar?.increment(1, { violations });
    },
  );
  bar?.stop();
}

if (options.json) {
  const failure = report.failures[0];
  process.stdout.write(
    `${JSON.stringify({
      seeds: report.seeds,
      steps: report.steps,
      violations: report.violations,
      coverage: report.coverage,
      elapsedMs: Math.round(report.elapsedMs),
      first: failure && {
        seed: failure.seed,
        invariants: [...new Set(failure.violations.map((v) => v.invariant))],
        message: failure.violations[0]?.message,
        steps: failure.steps.length,
        shrunk: failure.shrunk?.length,
        stalled: failure.stalled,
        world: failure.world,
        reproduce: failure.reproduce,
      },
    })}\n`,
  );
} else {
  const pick = (test: (name: string) => boolean) =>
    Object.entries(report.faults)
      .filter(([name]) => test(name))
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([name, n]) => `  ${name.padEnd(36)} ${n}`);
  process.stdout.write(
    [
      `shop simulation: ${report.seeds} seeds, ${report.steps} simulated steps, ${(report.elapsedMs / 1000).toFixed(1)} s`,
      "faults injected:",
      ...pick((name) => name.startsWith("step:") || name.startsWith("fired:") || name === "crash"),
      "coverage:",
      ...COVERAGE_KINDS.map(
        (kind) => `  ${kind.padEnd(36)} ${report.coverage[kind] || "0 (NOT EXERCISED by this run)"}`,
      ),
      "outcomes:",
      ...pick(
        (name) =>
          name.startsWith("effect:") ||
          name.startsWith("provider:") ||
          name === "operator-settled" ||
          name.startsWith("hand-over") ||
          name.startsWith("journal-log") ||
          name.startsWith("slice-owners") ||
          name.startsWith("peer-forwards"),
      ),
      `invariant checks: ${report.checks}`,
      `violations: ${report.violations}`,
      ...(report.cut ? [`cut: ${report.cut}`] : []),
      "",
    ].join("\n"),
  );
  for (const failure of report.failures.slice(0, 5)) {
    process.stdout.write(`\nseed ${failure.seed} (${failure.world}) ${failure.stalled ? "STALLED" : "violated"}:\n`);
    for (const v of failure.violations.slice(0, 10)) process.stdout.write(`  [${v.invariant}] ${v.message}\n`);
    if (failure.reproduce) {
      process.stdout.write(
        `shortest failing run: ${failure.shrunk?.length ?? failure.steps.length} steps\nreproduce: ${failure.reproduce}\n`,
      );
    }
  }
  if (report.failures.length > 5) process.stdout.write(`\n... and ${report.failures.length - 5} more failing seeds\n`);
  for (const v of report.budgetViolations) process.stdout.write(`\nover all seeds: [${v.invariant}] ${v.message}\n`);
}
process.exitCode = report.violations > 0 || report.cut ? 1 : 0;
