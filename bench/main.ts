import { cpus } from "node:os";
import { benchEffects } from "./effects.js";
import { benchEvents } from "./events.js";
import { benchJournal } from "./journal.js";
import { benchWorkflow } from "./workflow.js";

/**
 * `npm run bench`: runs each section in turn and prints its figures. Pass section names to run
 * only those (`npm run bench -- effects`). Figures only: nothing here asserts a timing.
 */
const sections: { name: string; run: (print: (line: string) => void) => Promise<void> }[] = [
  { name: "journal", run: benchJournal },
  { name: "effects", run: benchEffects },
  { name: "integration events", run: benchEvents },
  { name: "workflow", run: benchWorkflow },
];

const print = (line: string) => process.stdout.write(`${line}\n`);
const only = process.argv.slice(2);
const unknown = only.filter((name) => !sections.some((s) => s.name.startsWith(name)));
if (unknown.length > 0) {
  process.stderr.write(
    `unknown bench section(s): ${unknown.join(", ")}; known: ${sections.map((s) => s.name).join(", ")}\n`,
  );
  process.exit(2);
}
print(`oncely bench — node ${process.version}, ${cpus().length} CPUs, ${new Date().toISOString()}`);
for (const section of sections.filter((s) => only.length === 0 || only.some((name) => s.name.startsWith(name)))) {
  print(`\n## ${section.name}`);
  const started = performance.now();
  await section.run(print);
  print(`(${section.name}: ${((performance.now() - started) / 1000).toFixed(1)} s)`);
}
