import { migrations } from "../src/postgres/migrations.js";
import { fileSql, functionFile } from "../src/postgres/schema-files.js";
import type { Tables } from "../src/postgres/tables.js";
import { keepCommits, replayInto } from "./commit-replay.js";
import { parseWorkflowArgs, percentile } from "./workflow-figures.js";

/**
 * `npm run bench -- steps`: where the server's time per batch goes, step by step of the
 * set path (oncely_commit_set_packed.sql). One workflow run's commit statements are kept, then replayed
 * once per step into a fresh schema whose keyed set function returns just before that step (every
 * commit answered, so nothing falls back to the per-commit path); the server CPU per batch of each
 * cut, minus the cut before it, is what that step costs. Rounds alternate the order of the cuts,
 * since the machine drifts. Read with two caveats, printed with the figures: the WAL flush at
 * COMMIT is counted in the first step that writes (the events, in this workload), and a cut before
 * the events leaves the later commits of each order in version conflict, which the guards answer
 * without their effect-key probe, so the guards' figure is a lower bound.
 */

/** The set path's steps, each found by the comment that opens it in oncely_commit_set_packed.sql. */
export const STEPS: { name: string; before: string | undefined }[] = [
  { name: "parse the batch, call the functions, answer", before: "  -- 1. " },
  { name: "steps 1-2: keys shared, guards (one scan)", before: "  -- Lease-held outbox updates" },
  { name: "lease-held outbox updates", before: "  -- 3. " },
  { name: "step 3: inbox rows", before: "  -- 4. " },
  { name: "step 4: events, snapshots, and COMMIT's WAL flush", before: "  -- 5. " },
  { name: "step 5: outbox rows", before: "  -- 6. " },
  { name: "step 6: rows done", before: "  -- 7. " },
  { name: "step 7: answers (the whole function)", before: undefined },
];

/** The set function the client calls (packed), returning (every commit answered) just before the line `marker` opens. */
export function setPathCutBefore(t: Tables, marker: string | undefined): string {
  const { migration, file } = functionFile(migrations, "oncely_commit_set_packed");
  // Re-created over the migrated schema's own.
  const sql = fileSql(migration, file, t).replace("CREATE FUNCTION", "CREATE OR REPLACE FUNCTION");
  if (marker === undefined) return sql;
  const at = sql.indexOf(`\n${marker}`);
  if (at < 0) {
    throw new Error(`${file.name} has no step opening with "${marker.trim()}": update bench/commit-steps.ts`);
  }
  return `${sql.slice(0, at)}\n  results := array_fill('{"base": 0}'::text, ARRAY[v_n]);\n  RETURN;${sql.slice(at)}`;
}

export async function benchCommitSteps(print: (line: string) => void): Promise<void> {
  const options = parseWorkflowArgs(process.argv.slice(2));
  const { kept } = await keepCommits(options);
  const cpu = new Map<number, number[]>(STEPS.map((_, i) => [i, []]));
  let batches = 0;
  for (let round = 0; round < options.rounds; round++) {
    const order = STEPS.map((_, i) => i);
    if (round % 2 === 1) order.reverse();
    for (const i of order) {
      const r = await replayInto(kept, (t) => setPathCutBefore(t, STEPS[i]?.before));
      if (r.serverCpuMs === undefined) {
        print("  the server's CPU cannot be read from /proc (not a local server): no step breakdown");
        return;
      }
      batches = r.walls.length;
      cpu.get(i)?.push(r.serverCpuMs / r.walls.length);
    }
  }
  print(
    `commit statements of a ${options.orders}-order workflow (${options.inflight} in flight), ${batches} batches ` +
      `replayed ${options.rounds} times per cut; server CPU per batch, median of the rounds:`,
  );
  let before = 0;
  for (const [i, step] of STEPS.entries()) {
    const upTo = percentile(cpu.get(i) ?? [], 50);
    const all = (cpu.get(i) ?? []).map((v) => v.toFixed(2)).join(", ");
    print(
      `  ${step.name.padEnd(52)} ${(upTo - before).toFixed(2).padStart(6)} ms  (up to here ${upTo.toFixed(2)}: ${all})`,
    );
    before = upTo;
  }
  print(
    "  (COMMIT's WAL flush is counted in the first step that writes; cuts before the events leave later commits in " +
      "version conflict, answered without the effect-key probe, so the guards' figure is a lower bound)",
  );
}
