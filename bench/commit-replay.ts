import { readFileSync } from "node:fs";
import pg from "pg";
import { postgresJournal } from "../src/postgres/index.js";
import { type Tables, tables } from "../src/postgres/tables.js";
import { runOncelyPostgres } from "./workflow.js";
import { parseWorkflowArgs, percentile, type WorkflowOptions, warmupOf, watchSql } from "./workflow-figures.js";

/**
 * `npm run bench -- replay`: the PostgreSQL commit functions alone, without the actors, the
 * dispatcher or the client's own work. The order workflow runs once on PostgreSQL while every
 * group-commit statement it sends is kept (text and parameters); those statements are then sent
 * again, in order, on one connection, into a fresh schema, where they reproduce the same rows.
 * Printed: wall time per batch (one round trip: parse, the functions, COMMIT and its WAL flush)
 * and the server process's CPU per batch, read from /proc (n/a when the server is not local).
 * This is how a change to the SQL side (e.g. migration 9) is measured apart from the rest.
 */

const PG_URL = process.env.ONCELY_BENCH_PG_URL ?? "postgres://postgres@127.0.0.1:5432/test";
/** A schema-qualified commit function, as the journal names it; the schema is put back on replay. */
const COMMIT_CALL = /"[^"]+"\.(oncely_commit\w*)\(/;
const EVERY_COMMIT_CALL = new RegExp(COMMIT_CALL.source, "g");

export interface Kept {
  text: string;
  values: unknown[];
  /** Commits the statement holds: a JSON batch's length, or one for a lone commit. */
  commits: number;
}

/** Runs the workflow while keeping every commit statement it sends; answers them and how many orders ran. */
export async function keepCommits(options: WorkflowOptions): Promise<{ kept: Kept[]; ran: number }> {
  const kept: Kept[] = [];
  // Only the calls: the migrations' CREATE FUNCTION statements name the functions too.
  const stop = watchSql(pg.Client, (text, args) => {
    if (!text.startsWith("SELECT") || !COMMIT_CALL.test(text)) return;
    const values = [...((args[0] as { values?: unknown[] }).values ?? [])];
    const batch = /oncely_commit_(json|keyed|packed)/.test(text);
    kept.push({ text, values, commits: batch ? (JSON.parse(String(values[0])) as unknown[]).length : 1 });
  });
  try {
    const figures = await runOncelyPostgres(options);
    if (!figures.exactlyOnce.ok) throw new Error(`the captured run failed its check: ${figures.exactlyOnce.summary}`);
    return { kept, ran: warmupOf(options) + options.orders };
  } finally {
    stop();
  }
}

/** User + system CPU of a local process, in ms; undefined when /proc cannot tell (a remote server). */
function processCpuMs(pid: number): number | undefined {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.split(" ") ?? [];
    // utime and stime are fields 14 and 15 of stat(5), in clock ticks (100 per second on Linux).
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return undefined;
  }
}

/** What replaying the kept statements into one fresh schema measured. */
export interface Replayed {
  /** Statements sent first to warm the connection (not timed), and the commits the timed ones held. */
  warm: number;
  commits: number;
  /** Wall time of each timed statement (a batch), ms. */
  walls: number[];
  /** The server process's CPU over the timed batches, ms (undefined when not readable). */
  serverCpuMs: number | undefined;
  /** What the replay left, against what the captured run wrote (5 events and 4 finished effects an order). */
  events: number;
  effectsDone: number;
}

export interface ReplayFigures extends Replayed {
  orders: number;
  inflight: number;
  /** Batches timed. */
  batches: number;
  ordersRun: number;
}

/**
 * Replay `kept` into a fresh schema: migrated as the journal does, then `alter` (SQL run once the
 * schema is there: the step breakdown re-creates a function with it) applied to the schema's tables.
 */
export async function replayInto(kept: readonly Kept[], alter?: (t: Tables) => string): Promise<Replayed> {
  const schema = `bench_replay_${process.pid}_${Date.now().toString(36)}`;
  const journal = postgresJournal({ connectionString: PG_URL, schema });
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  try {
    await journal.migrate();
    if (alter) await client.query(alter(tables(schema)));
    const pid = (await client.query("SELECT pg_backend_pid() AS pid")).rows[0].pid as number;
    // The first tenth warms the connection's plans and caches, as the workflow's own warm-up does.
    const warm = Math.ceil(kept.length / 10);
    const walls: number[] = [];
    let cpuFrom: number | undefined;
    let commits = 0;
    for (const [index, { text, values, commits: held }] of kept.entries()) {
      if (index === warm) cpuFrom = processCpuMs(pid);
      const started = performance.now();
      await client.query({ text: text.replace(EVERY_COMMIT_CALL, `"${schema}".$1(`), values });
      if (index < warm) continue;
      walls.push(performance.now() - started);
      commits += held;
    }
    const cpuTo = processCpuMs(pid);
    const left = await client.query(
      `SELECT (SELECT count(*) FROM "${schema}".events) AS events,
        (SELECT count(*) FROM "${schema}".outbox WHERE status = 'done') AS done`,
    );
    return {
      warm,
      commits,
      walls,
      serverCpuMs: cpuFrom === undefined || cpuTo === undefined ? undefined : cpuTo - cpuFrom,
      events: Number(left.rows[0].events),
      effectsDone: Number(left.rows[0].done),
    };
  } finally {
    await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => {});
    await client.end();
    await journal.close();
  }
}

/** Capture one workflow run's commit statements and replay them into a fresh schema. */
export async function replayCommits(options: WorkflowOptions): Promise<ReplayFigures> {
  const { orders, inflight } = options;
  const { kept, ran } = await keepCommits(options);
  const r = await replayInto(kept);
  return { orders, inflight, batches: r.walls.length, ordersRun: ran, ...r };
}

export async function benchCommitReplay(print: (line: string) => void): Promise<void> {
  const f = await replayCommits(parseWorkflowArgs(process.argv.slice(2)));
  const cpu = f.serverCpuMs === undefined ? "n/a" : `${(f.serverCpuMs / f.batches).toFixed(2)} ms`;
  print(
    `commit statements of a ${f.orders}-order workflow (${f.inflight} in flight) replayed on one connection: ` +
      `${f.batches} batches after ${f.warm} to warm up, ${(f.commits / f.batches).toFixed(1)} commits/batch`,
  );
  print(
    `  wall per batch: median ${percentile(f.walls, 50).toFixed(2)} ms, mean ` +
      `${(f.walls.reduce((a, b) => a + b, 0) / f.batches).toFixed(2)} ms; server CPU per batch (mean): ${cpu}`,
  );
  const same = f.events === f.ordersRun * 5 && f.effectsDone === f.ordersRun * 4;
  print(
    `  replayed state: ${f.events} events, ${f.effectsDone} effects done for ${f.ordersRun} orders ` +
      `(${same ? "as the run wrote" : "NOT what the run wrote: 5 events and 4 effects an order"})`,
  );
}
