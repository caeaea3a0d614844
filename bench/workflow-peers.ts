import { spawn, spawnSync } from "node:child_process";
import { existsSync, readdirSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  cpuPerOrder,
  describeFigures,
  ordersPerSecond,
  parseResultLine,
  parseWorkflowArgs,
  percentile,
  type WorkflowFigures,
  type WorkflowOptions,
  warmupOf,
} from "./workflow-figures.js";

/**
 * `npm run bench -- peers [--orders N --inflight N --warmup N --rounds N]`: the order workflow on oncely
 * (PostgreSQL and SQLite journals), DBOS Transact and Restate, interleaved: each round runs every
 * system once, in a rotated order, so that noise from a busy machine hits all of them alike.
 * Each run is a child process of its own (fresh heap, no system's globals seen by another), killed
 * with everything it started if it overruns its time bound. The peers' packages live in
 * bench/peers/ and are installed there on first use, never by the root `npm ci`.
 */

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const PEERS_DIR = join(ROOT, "bench", "peers");
const BUILT_PACKAGE = "./bench/built-package.mjs";

export interface System {
  name: string;
  script: string;
  args: string[];
}

const SYSTEMS: System[] = [
  { name: "oncely PostgreSQL", script: "bench/workflow.ts", args: ["postgres"] },
  { name: "DBOS", script: "bench/peers/dbos.ts", args: [] },
  { name: "Restate", script: "bench/peers/restate.ts", args: [] },
  { name: "oncely SQLite", script: "bench/workflow.ts", args: ["sqlite"] },
];

/**
 * Ratios printed, each computed within a round (same noise) and summarised over the rounds: of
 * orders/s (a / b), and of the machine's CPU per order (b / a: how many times a's CPU b spends).
 */
const RATIOS: [string, string][] = [
  ["oncely PostgreSQL", "DBOS"],
  ["oncely PostgreSQL", "Restate"],
  ["oncely SQLite", "oncely PostgreSQL"],
];

function ensurePeersInstalled(print: (line: string) => void): void {
  if (existsSync(join(PEERS_DIR, "node_modules"))) return;
  print("installing the peers (npm ci --prefix bench/peers) …");
  const result = spawnSync("npm", ["ci", "--prefix", PEERS_DIR, "--no-audit", "--no-fund"], {
    cwd: ROOT,
    stdio: ["ignore", "inherit", "inherit"],
    env: { ...process.env, SCARF_ANALYTICS: "false" },
  });
  if (result.status !== 0) throw new Error(`npm ci --prefix bench/peers failed (exit ${result.status})`);
}

/** The newest modification time of the files below `dir` (ms), 0 when it holds none. */
function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) newest = Math.max(newest, statSync(join(entry.parentPath, entry.name)).mtimeMs);
  }
  return newest;
}

/** oncely runs from its build: built again when any source is newer than it (or it is missing). */
export function ensureBuilt(print: (line: string) => void): void {
  const built = join(ROOT, "dist", "index.js");
  if (existsSync(built) && statSync(built).mtimeMs >= newestMtime(join(ROOT, "src"))) return;
  print("building oncely (npm run build) …");
  const result = spawnSync("npm", ["run", "build", "--silent"], { cwd: ROOT, stdio: ["ignore", "inherit", "inherit"] });
  if (result.status !== 0) throw new Error(`npm run build failed (exit ${result.status})`);
}

/** A generous bound per run: a minute to start, plus 0.3 s per order (a slow system does ~20/s here). */
const runTimeoutMs = (options: WorkflowOptions): number => 60_000 + 300 * (options.orders + warmupOf(options));

/** Runs one system in a child process of its own process group, so a timeout kills all it started. */
export async function runSystem(system: System, options: WorkflowOptions): Promise<WorkflowFigures> {
  // Every system runs as its users run it: oncely from its build (`bench/built-package.mjs`), the peers from
  // their published packages; only the bench's own files go through tsx.
  const args = ["--import", "tsx", "--import", BUILT_PACKAGE, system.script, ...system.args];
  args.push("--orders", String(options.orders), "--inflight", String(options.inflight));
  args.push("--warmup", String(warmupOf(options)));
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, SCARF_ANALYTICS: "false" },
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr.on("data", (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4_000);
  });
  const killGroup = (signal: NodeJS.Signals) => {
    if (child.pid !== undefined && child.exitCode === null) {
      try {
        process.kill(-child.pid, signal);
      } catch {
        // already gone
      }
    }
  };
  // Detached, the group gets no terminal signal: a run interrupted here takes its child group along.
  const onParentExit = () => killGroup("SIGKILL");
  const onParentSignal = () => {
    killGroup("SIGKILL");
    process.exit(130);
  };
  process.once("exit", onParentExit);
  process.once("SIGINT", onParentSignal);
  process.once("SIGTERM", onParentSignal);
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    killGroup("SIGTERM");
    setTimeout(() => killGroup("SIGKILL"), 10_000).unref();
  }, runTimeoutMs(options));
  const code = await new Promise<number | null>((resolve) => child.once("close", resolve));
  clearTimeout(timer);
  process.off("exit", onParentExit);
  process.off("SIGINT", onParentSignal);
  process.off("SIGTERM", onParentSignal);
  // Whatever the child left in its group (a server it failed to stop) goes with it.
  killGroup("SIGKILL");
  const figures = parseResultLine(stdout);
  if (figures === undefined || code !== 0) {
    throw new Error(
      `${system.name} ${timedOut ? `timed out after ${runTimeoutMs(options) / 1000} s` : `exited ${code}`}: ${stderr.trim()}`,
    );
  }
  return figures;
}

const median = (values: number[]): number => percentile(values, 50);
const range = (values: number[], digits: number): string => {
  const sorted = [...values].sort((a, b) => a - b);
  const lo = (sorted[0] as number).toFixed(digits);
  const hi = (sorted[sorted.length - 1] as number).toFixed(digits);
  return lo === hi ? lo : `${lo}–${hi}`;
};

function summariseCheck(runs: WorkflowFigures[]): string {
  const ok = runs.filter((r) => r.exactlyOnce.ok).length;
  const failed = runs.find((r) => !r.exactlyOnce.ok)?.exactlyOnce;
  const sample = runs[0]?.exactlyOnce.summary ?? "no run";
  return ok === runs.length ? `OK in ${ok}/${runs.length} runs (${sample})` : `FAILED: ${failed?.summary}`;
}

function table(results: Map<string, WorkflowFigures[]>, rounds: WorkflowFigures[][]): string[] {
  const lines = [
    "| system | orders/s (median, range) | p50 ms | p99 ms (median, range) | CPU ms / order: machine, this process (medians) | SQL round trips / workflow | commits / workflow | exactly once |",
    "| --- | --- | --- | --- | --- | --- | --- | --- |",
  ];
  for (const [name, runs] of results) {
    const rates = runs.map(ordersPerSecond);
    const p99s = runs.map((r) => percentile(r.latencies, 99));
    const sql = runs.map((r) => r.sql).filter((s) => s !== undefined);
    const perWorkflow = (pick: (s: { roundTrips: number; commits: number }) => number) =>
      sql.length === 0 ? "n/a" : median(sql.map((s, i) => pick(s) / (runs[i] as WorkflowFigures).orders)).toFixed(1);
    const cpu = runs.map(cpuPerOrder).filter((c) => c !== undefined);
    const cpuCell =
      cpu.length === 0
        ? "n/a"
        : `${median(cpu.map((c) => c.machine)).toFixed(2)}, ${median(cpu.map((c) => c.process)).toFixed(2)}`;
    lines.push(
      `| ${name} | ${median(rates).toFixed(0)} (${range(rates, 0)}) | ${median(runs.map((r) => percentile(r.latencies, 50))).toFixed(0)} | ` +
        `${median(p99s).toFixed(0)} (${range(p99s, 0)}) | ${cpuCell} | ${perWorkflow((s) => s.roundTrips)} | ${perWorkflow((s) => s.commits)} | ` +
        `${summariseCheck(runs)} |`,
    );
  }
  lines.push("", "| ratio within each round | median | range |", "| --- | --- | --- |");
  const machineCpu = (f: WorkflowFigures) => cpuPerOrder(f)?.machine;
  for (const [a, b] of RATIOS) {
    const rates = withinRounds(rounds, a, b, (x, y) => ordersPerSecond(x) / ordersPerSecond(y));
    if (rates.length > 0) lines.push(`| orders/s, ${a} / ${b} | ${median(rates).toFixed(2)}× | ${range(rates, 2)}× |`);
  }
  for (const [a, b] of RATIOS) {
    // Inverted: how many times the CPU per order of b that a spends.
    const cpu = withinRounds(rounds, a, b, (x, y) => {
      const [cx, cy] = [machineCpu(x), machineCpu(y)];
      return cx === undefined || cy === undefined ? undefined : cy / cx;
    });
    if (cpu.length > 0) lines.push(`| CPU per order, ${b} / ${a} | ${median(cpu).toFixed(2)}× | ${range(cpu, 2)}× |`);
  }
  return lines;
}

/** `ratio(a's run, b's run)` in every round that has both (and where it is defined). */
function withinRounds(
  rounds: WorkflowFigures[][],
  a: string,
  b: string,
  ratio: (x: WorkflowFigures, y: WorkflowFigures) => number | undefined,
): number[] {
  return rounds
    .map((round) => {
      const x = round.find((f) => f.system === a);
      const y = round.find((f) => f.system === b);
      return x === undefined || y === undefined ? undefined : ratio(x, y);
    })
    .filter((r) => r !== undefined);
}

export async function benchPeers(print: (line: string) => void): Promise<void> {
  const options = parseWorkflowArgs(process.argv.slice(2));
  ensurePeersInstalled(print);
  ensureBuilt(print);
  print(
    `order workflow, interleaved: ${options.rounds} rounds × ${SYSTEMS.length} systems, ${options.orders} orders ` +
      `(after a warm-up of ${warmupOf(options)}), ${options.inflight} in flight; ` +
      "latency = start → last effect's outcome recorded; SQL statements and commits counted on the client " +
      "(pg Client.prototype.query wrapped), over the timed orders",
  );
  const results = new Map<string, WorkflowFigures[]>(SYSTEMS.map((s) => [s.name, []]));
  const rounds: WorkflowFigures[][] = [];
  for (let round = 0; round < options.rounds; round++) {
    const order = SYSTEMS.map((_, i) => SYSTEMS[(i + round) % SYSTEMS.length] as System);
    const figures: WorkflowFigures[] = [];
    for (const system of order) {
      const f = await runSystem(system, options);
      print(`round ${round + 1}: ${describeFigures(f)}`);
      figures.push(f);
      results.get(system.name)?.push(f);
    }
    rounds.push(figures);
  }
  print("");
  for (const line of table(results, rounds)) print(line);
  const failed = [...results.values()].flat().filter((f) => !f.exactlyOnce.ok);
  if (failed.length > 0) throw new Error(`exactly-once check failed: ${failed.map((f) => f.system).join(", ")}`);
}
