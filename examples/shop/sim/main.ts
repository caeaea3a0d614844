import cliProgress from "cli-progress";
import { Command, InvalidArgumentError } from "commander";
import { runSeeds, type SeedsReport } from "../../../src/testing/simulation/run-seeds.js";
import { simulate } from "../../../src/testing/simulation/simulate.js";
import { parseSteps } from "../../../src/testing/simulation/steps.js";
import { shopSimulation } from "./system.js";

/**
 * `npm run sim -- --seeds N`: the shop under deterministic simulation. Prints seeds, simulated
 * steps, faults by type, invariant checks and violations; exits 1 on any violation, printing the
 * shrunk reproduction.
 */
const integer = (name: string, min: number) => (value: string) => {
  const n = Number(value);
  if (!Number.isInteger(n) || n < min)
    throw new InvalidArgumentError(`${name} must be an integer >= ${min}, got "${value}"`);
  return n;
};

const program = new Command()
  .name("sim")
  .description("run the reference shop under deterministic simulation")
  .option("--seeds <n>", "how many seeds to run", integer("--seeds", 1), 50)
  .option("--first <n>", "first seed", integer("--first", 0), 1)
  .option("--steps <n>", "steps per seed", integer("--steps", 1), 250)
  .option("--orders <n>", "orders per seed", integer("--orders", 1), 6)
  .option("--seed <n>", "run this one seed (with --replay: exactly these steps)", integer("--seed", 0))
  .option("--replay <steps>", "step text printed by a failing run")
  .option("--payment-no-dedup", "the payment provider does not dedup by key (only lookup may settle)")
  .option("--always-recover", "evict every actor after every step")
  .showHelpAfterError();

const options = program.parse().opts<{
  seeds: number;
  first: number;
  steps: number;
  orders: number;
  seed?: number;
  replay?: string;
  paymentNoDedup?: boolean;
  alwaysRecover?: boolean;
}>();
if (options.replay !== undefined && options.seed === undefined) program.error("--replay needs --seed");

const system = shopSimulation({ orders: options.orders, paymentDedups: !options.paymentNoDedup });
const started = performance.now();
let report: SeedsReport;
if (options.seed !== undefined) {
  const steps = options.replay === undefined ? options.steps : parseSteps(options.replay);
  const result = await simulate(system, { seed: options.seed, steps, alwaysRecover: options.alwaysRecover === true });
  report = {
    seeds: 1,
    steps: result.steps.length,
    faults: result.faults,
    checks: result.checks,
    violations: result.violations.length,
    failures: result.violations.length ? [result] : [],
  };
} else {
  const bar = process.stdout.isTTY
    ? new cliProgress.SingleBar(
        { format: "seeds {bar} {value}/{total} | violations {violations}" },
        cliProgress.Presets.shades_classic,
      )
    : undefined;
  let violations = 0;
  bar?.start(options.seeds, 0, { violations });
  report = await runSeeds(
    system,
    { first: options.first, count: options.seeds, steps: options.steps, alwaysRecover: options.alwaysRecover === true },
    (result) => {
      violations += result.violations.length;
      bar?.increment(1, { violations });
    },
  );
  bar?.stop();
}
const seconds = (performance.now() - started) / 1000;

const faults = Object.entries(report.faults)
  .filter(([name]) => name.startsWith("step:") || name.startsWith("fired:") || name === "crash")
  .sort(([a], [b]) => a.localeCompare(b));
const outcomes = Object.entries(report.faults)
  .filter(([name]) => name.startsWith("effect:") || name.startsWith("provider:") || name === "operator-settled")
  .sort(([a], [b]) => a.localeCompare(b));
process.stdout.write(
  [
    `shop simulation: ${report.seeds} seeds, ${report.steps} simulated steps, ${options.orders} orders per seed, ${seconds.toFixed(1)} s`,
    "faults injected:",
    ...faults.map(([name, n]) => `  ${name.padEnd(36)} ${n}`),
    "outcomes:",
    ...outcomes.map(([name, n]) => `  ${name.padEnd(36)} ${n}`),
    `invariant checks: ${report.checks}`,
    `violations: ${report.violations}`,
    "",
  ].join("\n"),
);
for (const failure of report.failures) {
  process.stdout.write(`\nseed ${failure.seed} violated:\n`);
  for (const v of failure.violations.slice(0, 10)) process.stdout.write(`  [${v.invariant}] ${v.message}\n`);
  process.stdout.write(
    `shortest failing run: ${failure.shrunk?.length ?? failure.steps.length} steps\nreproduce: ${failure.reproduce}\n`,
  );
}
process.exitCode = report.violations > 0 ? 1 : 0;
