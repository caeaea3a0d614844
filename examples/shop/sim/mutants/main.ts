import { Command } from "commander";
import { checkMutants, formatResult, listMutants } from "./run-mutants.js";

/**
 * `npm run sim:mutants`: plants each bug of examples/shop/sim/mutants/*.patch in a copy of the
 * library and runs the shop simulator's default budget against it. Prints per bug whether it was
 * caught, by which seed, after how many steps and how long; exits 1 unless every bug is caught.
 */
const options = new Command()
  .name("sim:mutants")
  .description("check that the shop simulator's default budget catches every planted bug")
  .option("--only <names>", "comma-separated mutant names")
  .option("--parallel <n>", "mutants checked at once", (v) => Number(v), 2)
  .option("--sim <args>", 'more arguments for the simulator, e.g. "--all-dedup"')
  .parse()
  .opts<{ only?: string; parallel: number; sim?: string }>();

const all = await listMutants();
const only = options.only?.split(",").map((s) => s.trim());
const unknown = only?.filter((name) => !all.some((m) => m.name === name)) ?? [];
if (unknown.length > 0) {
  process.stderr.write(`unknown mutant(s): ${unknown.join(", ")}; known: ${all.map((m) => m.name).join(", ")}\n`);
  process.exit(2);
}
const mutants = only ? all.filter((m) => only.includes(m.name)) : all;
const started = performance.now();
const results = await checkMutants(mutants, {
  parallel: options.parallel,
  simArgs: options.sim?.split(/\s+/).filter(Boolean),
  onResult: (r) => process.stdout.write(`${formatResult(r)}\n`),
});
const caught = results.filter((r) => r.verdict === "caught").length;
process.stdout.write(
  `\n${caught} of ${results.length} planted bugs caught by the default simulator budget, ${(
    (performance.now() - started) / 1000
  ).toFixed(1)} s\n`,
);
process.exitCode = caught === results.length ? 0 : 1;
