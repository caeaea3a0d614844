import { type SimulationOptions, type SimulationResult, simulate } from "./simulate.js";
import type { SimulationSystem } from "./world.js";

export interface SeedsReport {
  seeds: number;
  steps: number;
  faults: Record<string, number>;
  checks: number;
  violations: number;
  /** The failing runs, with their shrunk reproduction. */
  failures: SimulationResult[];
}

/** Run seeds `first .. first+count-1`; `onSeed` sees each result (for progress bars). */
export async function runSeeds(
  system: SimulationSystem,
  options: Omit<SimulationOptions, "seed"> & { first?: number; count: number },
  onSeed?: (result: SimulationResult) => void,
): Promise<SeedsReport> {
  const report: SeedsReport = { seeds: 0, steps: 0, faults: {}, checks: 0, violations: 0, failures: [] };
  const first = options.first ?? 1;
  for (let seed = first; seed < first + options.count; seed++) {
    const result = await simulate(system, { ...options, seed });
    report.seeds++;
    report.steps += result.steps.length;
    report.checks += result.checks;
    report.violations += result.violations.length;
    for (const [name, n] of Object.entries(result.faults)) report.faults[name] = (report.faults[name] ?? 0) + n;
    if (result.violations.length > 0) report.failures.push(result);
    onSeed?.(result);
  }
  return report;
}
