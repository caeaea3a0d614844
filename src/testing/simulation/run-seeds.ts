import { FAULT_POINTS, type FaultPoint } from "../../core/faults.js";
import { type CoverageKind, coverageOf } from "./coverage.js";
import {
  DEFAULT_SHRINK_TIME_MS,
  DEFAULT_TIME_BUDGET_MS,
  type SimulationOptions,
  type SimulationResult,
  simulate,
  type Violation,
} from "./simulate.js";
import type { SimulationSystem } from "./world.js";

export interface SeedsReport {
  seeds: number;
  steps: number;
  faults: Record<string, number>;
  /** What the seeds exercised, by kind (0: not exercised at all). */
  coverage: Record<CoverageKind, number>;
  checks: number;
  violations: number;
  /** The failing runs; the first with its shrunk reproduction. */
  failures: SimulationResult[];
  /**
   * What failed across the whole budget rather than in one seed (counted in `violations` too):
   * `armed-fault-points-fire` when a point the system reaches was armed and never fired.
   */
  budgetViolations: Violation[];
  /** Set when the run stopped before its last seed: why. */
  cut?: string;
  /** Wall-clock time of all seeds (ms); only printed, never asserted on. */
  elapsedMs: number;
}

export interface SeedsOptions extends Omit<SimulationOptions, "seed"> {
  first?: number | undefined;
  count: number;
  /** Stop at the first failing seed (the mutation check: which seed catches a bug, and how fast). */
  stopAtFirstFailure?: boolean | undefined;
  /**
   * Wall-clock budget of all seeds together (ms): no seed starts after it, and each seed's own
   * budget is cut to what is left, so a test using this finishes in time whatever the code does.
   */
  totalTimeMs?: number | undefined;
}

/**
 * Points the seeds armed (`crash-at:P`) that never fired (`fired:P`). Judged over the whole
 * budget, not per seed: one seed arms a point late, or crashes before reaching it, and that is
 * fine; a point that never fires in any seed is a path the runs never took.
 */
function armedNeverFired(points: readonly FaultPoint[], faults: Record<string, number>): FaultPoint[] {
  return points.filter((point) => (faults[`crash-at:${point}`] ?? 0) > 0 && (faults[`fired:${point}`] ?? 0) === 0);
}

/**
 * Run seeds `first .. first+count-1`; `onSeed` sees each result (for progress bars). Only the
 * first failure is shrunk (shrinking every one under a bug that breaks every seed would take
 * seeds × shrink time); the others keep their full steps.
 */
export async function runSeeds(
  system: SimulationSystem,
  options: SeedsOptions,
  onSeed?: (result: SimulationResult) => void,
): Promise<SeedsReport> {
  const started = performance.now();
  const report: SeedsReport = {
    seeds: 0,
    steps: 0,
    faults: {},
    coverage: coverageOf({}),
    checks: 0,
    violations: 0,
    failures: [],
    budgetViolations: [],
    elapsedMs: 0,
  };
  const first = options.first ?? 1;
  const until = options.totalTimeMs === undefined ? Number.POSITIVE_INFINITY : started + options.totalTimeMs;
  for (let seed = first; seed < first + options.count; seed++) {
    const left = until - performance.now();
    if (left <= 0) {
      report.cut = `wall-clock budget of ${options.totalTimeMs} ms spent after ${report.seeds} of ${options.count} seeds`;
      break;
    }
    const ownBudget = options.timeBudgetMs ?? DEFAULT_TIME_BUDGET_MS;
    const result = await simulate(system, {
      ...options,
      seed,
      shrink: options.shrink !== false && report.failures.length === 0,
      timeBudgetMs: Math.min(ownBudget, left),
      shrinkTimeMs: Math.min(options.shrinkTimeMs ?? DEFAULT_SHRINK_TIME_MS, left),
    });
    if (result.stalled !== undefined && left < ownBudget) {
      // Cut by what was left of the total, not by its own budget: that says nothing about the seed.
      report.cut = `wall-clock budget of ${options.totalTimeMs} ms spent during seed ${seed}, after ${report.seeds} of ${options.count} seeds`;
      break;
    }
    report.seeds++;
    report.steps += result.steps.length;
    report.checks += result.checks;
    report.violations += result.violations.length;
    for (const [name, n] of Object.entries(result.faults)) report.faults[name] = (report.faults[name] ?? 0) + n;
    if (result.violations.length > 0) report.failures.push(result);
    onSeed?.(result);
    if (options.stopAtFirstFailure && result.violations.length > 0) break;
  }
  report.coverage = coverageOf(report.faults);
  const stoppedEarly = report.cut !== undefined || report.seeds < options.count;
  const unfired = stoppedEarly ? [] : armedNeverFired(system.faultPoints ?? FAULT_POINTS, report.faults);
  if (unfired.length > 0) {
    report.budgetViolations.push({
      invariant: "armed-fault-points-fire",
      message:
        `fault points armed but never fired over ${report.seeds} seeds: ${unfired.join(", ")}. ` +
        "Either the system cannot reach them (leave them out of its faultPoints) or its workers never " +
        "take that path (a worker missing from workers(), or built without env.faults)",
    });
    report.violations += report.budgetViolations.length;
  }
  report.elapsedMs = performance.now() - started;
  return report;
}
