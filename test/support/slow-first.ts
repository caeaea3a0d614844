import { relative } from "node:path";
import type { TestSpecification } from "vitest/node";
import { BaseSequencer } from "vitest/node";

/**
 * The files that took longest in a full run (2026-12-05, `npx vitest run --reporter=json`, see
 * docs/development.md), longest first. Vitest's own order puts them wherever their file size or a local cache of earlier runs
 * puts them; in a fresh checkout (CI) a small file that runs for minutes (the mutation check) would
 * start last and run alone at the end, with the other worker idle. Started first, they overlap
 * with the many short files instead. A path here that no longer exists fails
 * test/scripts/slow-first.unit.test.ts.
 */
export const SLOW_FIRST: readonly string[] = [
  "test/proof/crash-matrix-kill.int.test.ts",
  "examples/shop/sim/simulation.unit.test.ts",
  "test/shop/demo.e2e.test.ts",
  "examples/shop/sim/mutants/mutants.int.test.ts",
  "test/proof/crash-matrix-throw.int.test.ts",
  "test/proof/crash-matrix-pg-terminate.int.test.ts",
  "test/journal/postgres.int.test.ts",
  "examples/shop/providers/main.int.test.ts",
  "test/partition/worker-cut-off.int.test.ts",
  "test/messaging/journal-transport-crash.int.test.ts",
  "test/cli/cli-process.int.test.ts",
  "examples/shop/contexts/poison.int.test.ts",
  "test/evolution/simulated-upgrade.unit.test.ts",
  "test/journal/postgres-differential.int.test.ts",
  "test/journal/sqlite-differential.int.test.ts",
  "test/console/console.e2e.test.ts",
];

/** `files` with those named in `slowFirst` (paths relative to `root`) moved to the front, in that list's order; the rest keep their order. */
export function slowFirst<T extends { moduleId: string }>(
  files: readonly T[],
  root: string,
  slowFirst: readonly string[],
): T[] {
  const rank = (file: T) => {
    const index = slowFirst.indexOf(relative(root, file.moduleId).split("\\").join("/"));
    return index === -1 ? slowFirst.length : index;
  };
  // Array.prototype.sort is stable: files outside the list keep vitest's order.
  return [...files].sort((a, b) => rank(a) - rank(b));
}

/** Vitest's order (projects, then cached durations or file size), with SLOW_FIRST moved to the front. */
export class SlowFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    return slowFirst(await super.sort(files), this.ctx.config.root, SLOW_FIRST);
  }
}
