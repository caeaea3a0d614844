import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { checkMutant, checkMutants, formatResult, listMutants } from "./run-mutants.js";

/**
 * The mutation check: every planted bug (examples/shop/sim/mutants/*.patch, applied to a copy of
 * the library, never to this tree) must be caught by the shop simulator's default budget.
 * Child processes: two mutants at a time. Nothing is shrunk here (`npm run sim:mutants` shrinks):
 * the verdict, seed and invariants come from the catching run itself, and shrinking a caught
 * mutant's run for the printed reproduction cost 2 s of CPU per mutant.
 */
describe("the shop simulator catches every planted bug", () => {
  const scratch = mkdtemp(join(tmpdir(), "oncely-stale-patch-"));
  afterAll(async () => rm(await scratch, { recursive: true, force: true }));

  it("about ten planted bugs, each caught within the default budget", { timeout: 300_000 }, async () => {
    const mutants = await listMutants();
    expect(mutants.length).toBeGreaterThanOrEqual(10);
    const results = await checkMutants(mutants, { parallel: 2, shrinkTimeMs: 0 });
    process.stdout.write(`${results.map(formatResult).join("\n")}\n`);
    expect(results.filter((r) => r.verdict !== "caught").map(formatResult)).toEqual([]);
  });

  it("lease fencing switched off is caught even when every provider dedups by key", { timeout: 120_000 }, async () => {
    const mutant = (await listMutants()).find((m) => m.name === "lease-fencing-off");
    expect(mutant).toBeDefined();
    const result = await checkMutant(mutant as NonNullable<typeof mutant>, ["--all-dedup"], 0);
    expect(result.verdict, formatResult(result)).toBe("caught");
    expect(result.invariants).toContain("lease-fencing");
  });

  it("a patch that no longer applies fails the check, saying so", async () => {
    const patch = join(await scratch, "gone.patch");
    await writeFile(
      patch,
      [
        "A bug in a line that is not there any more.",
        "",
        "diff --git a/src/core/faults.ts b/src/core/faults.ts",
        "--- a/src/core/faults.ts",
        "+++ b/src/core/faults.ts",
        "@@ -1,1 +1,1 @@",
        "-this line is not in the file",
        "+neither is this one",
        "",
      ].join("\n"),
    );
    const result = await checkMutant({ name: "gone", bug: "A bug in a line that is not there any more.", patch });
    expect(result.verdict).toBe("stale");
    expect(result.detail).toMatch(/patch no longer applies/);
  });
});
