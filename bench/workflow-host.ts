import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import pg from "pg";
import { type Commit, createHost, type Journal, succeeded } from "../src/index.js";
import { groupCommitLine, groupCommitMark } from "./group-commit-stats.js";
import { orderActor } from "./workflow.js";
import {
  CallLedger,
  cpuPerOrder,
  describeFigures,
  ORDER_STEPS,
  type PgClientClass,
  parseWorkflowArgs,
  percentile,
  runAsChild,
  runWorkload,
  type WorkflowFigures,
  type WorkflowOptions,
  warmupOf,
} from "./workflow-figures.js";
import { ensureBuilt, runSystem, type System } from "./workflow-peers.js";

/**
 * The order workflow of `bench/workflow.ts` through the public host API: `createHost` with the
 * order actor and the four handlers, each order `host.send` then, in mode `wait`,
 * `host.waitFor(order, done === 4)`, as an application awaits a result. Mode `commit` runs the
 * same host but finishes an order when the commit of its last outcome returns (seen by a journal
 * wrapper both modes share), so the two differ only by the wait path: its cost is the difference
 * of their latencies. Within a `wait` run, the same wrapper times each order's last commit, so the
 * bench also prints how long after that commit returned its `waitFor` resolved, free of the noise
 * between two runs. `npm run bench -- host` runs both modes alternately.
 */

const PG_URL = process.env.ONCELY_BENCH_PG_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const LAST = ORDER_STEPS.length;
export type HostMode = "wait" | "commit";

/** The journal, calling `done(stream)` once a commit that records an order's last step has returned. */
function observed(journal: Journal, done: (stream: string) => void): Journal {
  const commit = async (c: Commit) => {
    const result = await journal.commit(c);
    if (c.stream && c.events?.some((e) => e.type === "StepDone" && (e.data as { step: number }).step === LAST - 1)) {
      done(c.stream);
    }
    return result;
  };
  return new Proxy(journal, {
    get: (target, property) => {
      if (property === "commit") return commit;
      const value = Reflect.get(target, property, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

/**
 * A run's figures; in mode `wait`, also per timed order the ms from the return of its last commit to
 * the resolution of its `waitFor` (`lags`): the wait path's own delay, free of the two runs' noise.
 */
export type HostFigures = WorkflowFigures & { lags?: number[] };

async function runHost(
  backend: Journal,
  system: string,
  mode: HostMode,
  options: WorkflowOptions,
  sqlClient?: PgClientClass,
): Promise<HostFigures> {
  const ledger = new CallLedger();
  const finished = new Map<string, () => void>();
  // Mode `wait`: when each order's last commit returned, until its wait resolves; or when its wait
  // resolved, for one that saw the commit (a read) before the commit's own call returned.
  const lastCommit = new Map<string, number>();
  const resolvedFirst = new Map<string, number>();
  const lags = new Map<string, number>();
  const journal = observed(backend, (stream) => {
    finished.get(stream)?.();
    if (mode !== "wait") return;
    const resolved = resolvedFirst.get(stream);
    if (resolved === undefined) lastCommit.set(stream, performance.now());
    else {
      resolvedFirst.delete(stream);
      lags.set(stream, resolved - performance.now());
    }
  });
  const host = createHost({
    journal,
    actors: [orderActor],
    dispatcher: { batchSize: 64, concurrency: options.inflight, pollIntervalMs: 50 },
    handlers: ORDER_STEPS.map((kind) => ({
      kind,
      policy: { providerDedups: true, timeoutMs: 5_000, leaseMs: 30_000 },
      run: async (_input: unknown, { idempotencyKey }: { idempotencyKey: string }) => {
        ledger.record(idempotencyKey);
        return succeeded({ ok: true });
      },
    })),
  });
  await host.start();
  const mark = groupCommitMark(backend);
  try {
    const { ids, ...measured } = await runWorkload(
      options,
      async (id) => {
        const address = `order/${id}`;
        if (mode === "wait") {
          await host.send(address, { type: "Place" }, { expectNew: true });
          await host.waitFor<{ done: number }>(address, (state) => state.done === LAST);
          const committed = lastCommit.get(address);
          lastCommit.delete(address);
          if (committed === undefined) resolvedFirst.set(address, performance.now());
          else lags.set(address, performance.now() - committed);
          return;
        }
        const done = new Promise<void>((resolve) => finished.set(address, resolve));
        await host.send(address, { type: "Place" }, { expectNew: true });
        await done;
        finished.delete(address);
      },
      sqlClient,
    );
    return {
      system,
      orders: options.orders,
      inflight: options.inflight,
      ...measured,
      exactlyOnce: ledger.check(ids),
      groupCommit: groupCommitLine(backend, mark),
      ...(mode === "wait" ? { lags: timedLags(ids.slice(warmupOf(options)), lags) } : {}),
    };
  } finally {
    await host.stop();
  }
}

/** The lags of the timed orders (`ids` without the warm-up), each order's once its wait and its commit are both seen. */
function timedLags(ids: readonly string[], lags: ReadonlyMap<string, number>): number[] {
  return ids.flatMap((id) => {
    const lag = lags.get(`order/${id}`);
    return lag === undefined ? [] : [lag];
  });
}

async function onPostgres(mode: HostMode, options: WorkflowOptions): Promise<HostFigures> {
  const { postgresJournal } = await import("../src/postgres/index.js");
  const schema = `bench_host_${process.pid}_${Date.now().toString(36)}`;
  const admin = new pg.Client({ connectionString: PG_URL, connectionTimeoutMillis: 3_000 });
  await admin.connect();
  try {
    await admin.query(`CREATE SCHEMA "${schema}"`);
    const journal = postgresJournal({ connectionString: PG_URL, schema });
    try {
      await journal.migrate();
      return await runHost(journal, `host PostgreSQL, ${mode}`, mode, options, pg.Client);
    } finally {
      await journal.close();
    }
  } finally {
    await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => {});
    await admin.end();
  }
}

async function onSqlite(mode: HostMode, options: WorkflowOptions): Promise<HostFigures> {
  const { sqliteJournal } = await import("../src/sqlite/index.js");
  const dir = mkdtempSync(join(tmpdir(), "oncely-bench-host-"));
  const journal = sqliteJournal({ path: join(dir, "workflow.db") });
  try {
    await journal.migrate();
    return await runHost(journal, `host SQLite, ${mode}`, mode, options);
  } finally {
    await journal.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** p50, p99 and max of the wait's lag behind the last commit, and how many orders saw their result before it returned. */
function lagLine(lags: readonly number[]): string {
  const early = lags.filter((lag) => lag < 0).length;
  return (
    `waitFor after the last commit returned: p50 ${percentile(lags, 50).toFixed(2)} ms, p99 ${percentile(lags, 99).toFixed(2)} ms, ` +
    `max ${Math.max(...lags).toFixed(1)} ms; ${early} of ${lags.length} resolved before it returned`
  );
}

export const HOST_RUNS = { postgres: onPostgres, sqlite: onSqlite };

// Run alone or as a child: `npx tsx bench/workflow-host.ts postgres|sqlite wait|commit [--orders N --inflight N]`
if (import.meta.url === `file://${process.argv[1]}`) {
  const [backend = "", mode = ""] = process.argv.slice(2);
  if (!Object.hasOwn(HOST_RUNS, backend) || (mode !== "wait" && mode !== "commit")) {
    process.stderr.write(
      "usage: tsx bench/workflow-host.ts postgres|sqlite wait|commit [--orders N] [--inflight N] [--warmup N]\n",
    );
    process.exit(2);
  }
  const run = HOST_RUNS[backend as keyof typeof HOST_RUNS];
  await runAsChild((options) => run(mode, options));
}

const MODES: HostMode[] = ["commit", "wait"];

/**
 * `npm run bench -- host [--orders N --inflight N --warmup N --rounds N]`: the workflow through
 * `createHost` on PostgreSQL, each round a run finished at the last commit and a run awaiting
 * `host.waitFor`, alternately in child processes of their own (from the build, as `peers` runs
 * oncely), then p50/p99 of each and the wait's cost within each round.
 */
export async function benchHost(print: (line: string) => void): Promise<void> {
  const options = parseWorkflowArgs(process.argv.slice(2));
  ensureBuilt(print);
  print(
    `order workflow through createHost on PostgreSQL, ${options.rounds} rounds × ${MODES.join(" / ")}, ` +
      `${options.orders} orders (after a warm-up of ${warmupOf(options)}), ${options.inflight} in flight; ` +
      "commit: an order ends when its last outcome's commit returns; wait: when host.waitFor resolves",
  );
  const runs = new Map<HostMode, HostFigures[]>(MODES.map((mode) => [mode, []]));
  for (let round = 0; round < options.rounds; round++) {
    for (const mode of round % 2 === 0 ? MODES : [...MODES].reverse()) {
      const system: System = { name: `host ${mode}`, script: "bench/workflow-host.ts", args: ["postgres", mode] };
      const figures: HostFigures = await runSystem(system, options);
      print(
        `round ${round + 1}: ${describeFigures(figures)}${figures.lags ? `\n${"".padEnd(23)}${lagLine(figures.lags)}` : ""}`,
      );
      runs.get(mode)?.push(figures);
    }
  }
  const p = (f: WorkflowFigures, at: number) => percentile(f.latencies, at);
  const median = (values: number[]) => percentile(values, 50);
  for (const [mode, figures] of runs) {
    print(
      `${mode}: p50 ${median(figures.map((f) => p(f, 50))).toFixed(1)} ms, p99 ${median(figures.map((f) => p(f, 99))).toFixed(1)} ms ` +
        `(medians of ${figures.length}; p99 ${figures.map((f) => p(f, 99).toFixed(0)).join(", ")}); ` +
        `this process's CPU per order ${figures.map((f) => cpuPerOrder(f)?.process.toFixed(2) ?? "n/a").join(", ")} ms; ` +
        `SQL round trips per order ${figures.map((f) => (f.sql ? (f.sql.roundTrips / f.orders).toFixed(2) : "n/a")).join(", ")}`,
    );
  }
  const [commit = [], wait = []] = MODES.map((mode) => runs.get(mode) ?? []);
  const added = wait.map((f, i) => p(f, 99) - p(commit[i] as WorkflowFigures, 99));
  print(`p99 added by waitFor within each round: ${added.map((ms) => ms.toFixed(1)).join(", ")} ms`);
  const lags = wait.map((f) => f.lags ?? []);
  print(
    `from the last commit's return to waitFor's resolution, per order: p50 ${lags.map((l) => percentile(l, 50).toFixed(2)).join(", ")} ms; ` +
      `p99 ${lags.map((l) => percentile(l, 99).toFixed(2)).join(", ")} ms; max ${lags.map((l) => Math.max(...l).toFixed(1)).join(", ")} ms`,
  );
  const failed = [...commit, ...wait].filter((f) => !f.exactlyOnce.ok);
  if (failed.length > 0) throw new Error(`exactly-once check failed: ${failed.map((f) => f.system).join(", ")}`);
}
