import { cpus } from "node:os";
import { benchCommitReplay } from "./commit-replay.js";
import { benchCommitSteps } from "./commit-steps.js";
import { benchEffects } from "./effects.js";
import { benchEvents } from "./events.js";
import { benchJournal } from "./journal.js";
import { benchLongGap } from "./long-gap.js";
import { benchScale } from "./scale.js";
import { benchWorkflow } from "./workflow.js";
import { benchHost } from "./workflow-host.js";
import { benchPeers } from "./workflow-peers.js";

/**
 * `npm run bench`: runs each section in turn and prints its figures. Pass section names to run
 * only those (`npm run bench -- effects`); options such as `--orders 500` go to the sections that
 * take them. Sections marked `onlyWhenNamed` (they install packages or take minutes) run only when
 * named. Figures only: nothing here asserts a timing.
 */
const sections: {
  name: string;
  run: (print: (line: string) => void) => Promise<void>;
  onlyWhenNamed?: boolean;
}[] = [
  { name: "journal", run: benchJournal },
  { name: "effects", run: benchEffects },
  { name: "integration events", run: benchEvents },
  { name: "long gap", run: benchLongGap },
  { name: "workflow", run: benchWorkflow },
  { name: "host", run: benchHost },
  { name: "replay", run: benchCommitReplay },
  { name: "steps", run: benchCommitSteps, onlyWhenNamed: true },
  { name: "peers", run: benchPeers, onlyWhenNamed: true },
  { name: "scale", run: benchScale, onlyWhenNamed: true },
];

const print = (line: string) => process.stdout.write(`${line}\n`);
const args = process.argv.slice(2);
// Section names are the arguments that are neither an option nor an option's value.
const only = args.filter((arg, i) => !arg.startsWith("--") && !args[i - 1]?.startsWith("--"));
const unknown = only.filter((name) => !sections.some((s) => s.name.startsWith(name)));
if (unknown.length > 0) {
  process.stderr.write(
    `unknown bench section(s): ${unknown.join(", ")}; known: ${sections.map((s) => s.name).join(", ")}\n`,
  );
  process.exit(2);
}
const chosen = sections.filter((s) =>
  only.length === 0 ? !s.onlyWhenNamed : only.some((name) => s.name.startsWith(name)),
);
print(`oncely bench — node ${process.version}, ${cpus().length} CPUs, ${new Date().toISOString()}`);
for (const section of chosen) {
  print(`\n## ${section.name}`);
  const started = performance.now();
  await section.run(print);
  print(`(${section.name}: ${((performance.now() - started) / 1000).toFixed(1)} s)`);
}
