import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { defineActor } from "../src/core/actor.js";
import { silentLogger } from "../src/core/logger.js";
import { recover } from "../src/core/recovery.js";
import { createRuntime } from "../src/core/runtime.js";
import type { Journal, NewEvent } from "../src/journal/types.js";
import { postgresJournal } from "../src/postgres/index.js";
import { sqliteJournal } from "../src/sqlite/index.js";
import { groupCommitLine, groupCommitMark } from "./group-commit-stats.js";

/**
 * Journal throughput and recovery, per back end:
 * - single-event appends per second through the actor runtime, 1 and 50 concurrent actors;
 * - recovery of one actor with 100,000 events, by full replay and from a snapshot 1,000 events back.
 */

interface Counter {
  n: number;
}
type Incremented = { type: "incremented" };

const counter = (withSnapshot: boolean) =>
  defineActor<Counter, { type: "increment" }, Incremented>({
    type: "counter",
    initialState: () => ({ n: 0 }),
    evolve: (state) => ({ n: state.n + 1 }),
    decide: () => ({ events: [{ type: "incremented" }] }),
    ...(withSnapshot ? { snapshot: { every: 1_000_000, schemaVersion: 1 } } : {}),
  });

const APPEND_WINDOW_MS = 2_000;
const RECOVERY_EVENTS = 100_000;
const SNAPSHOT_AT = 99_000;
const BATCH = 5_000;

async function appendsPerSecond(journal: Journal, actors: number, tag: string): Promise<number> {
  const runtime = createRuntime({ journal, actors: [counter(false)] });
  const until = performance.now() + APPEND_WINDOW_MS;
  const started = performance.now();
  let done = 0;
  await Promise.all(
    Array.from({ length: actors }, async (_, a) => {
      while (performance.now() < until) {
        await runtime.send(`counter/${tag}-${a}`, { type: "increment" });
        done++;
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  runtime.close();
  return done / seconds;
}

async function writeBigStream(journal: Journal, stream: string): Promise<void> {
  const batch = (from: number, count: number): NewEvent[] =>
    Array.from({ length: count }, (_, i) => ({
      eventId: `${stream}-${from + i + 1}`,
      type: "incremented",
      data: { type: "incremented" },
    }));
  let version = 0;
  while (version < RECOVERY_EVENTS) {
    const count = Math.min(BATCH, (version < SNAPSHOT_AT ? SNAPSHOT_AT : RECOVERY_EVENTS) - version);
    const result = await journal.commit({ stream, expectedVersion: version, events: batch(version, count), now: 1 });
    version = result.version;
    if (version === SNAPSHOT_AT) {
      await journal.commit({
        stream,
        expectedVersion: version,
        snapshot: { version, schemaVersion: 1, state: { n: version } },
        now: 1,
      });
    }
  }
}

async function timeRecovery(journal: Journal, stream: string, withSnapshot: boolean): Promise<number> {
  const started = performance.now();
  const { state, version, fromSnapshot } = await recover(
    journal,
    counter(withSnapshot),
    stream,
    stream.slice("counter/".length),
    silentLogger,
  );
  const ms = performance.now() - started;
  if ((state as Counter).n !== RECOVERY_EVENTS || version !== RECOVERY_EVENTS || fromSnapshot !== withSnapshot) {
    throw new Error(`recovery gave n=${(state as Counter).n} v=${version} fromSnapshot=${fromSnapshot}`);
  }
  return ms;
}

async function benchBackend(name: string, journal: Journal, print: (line: string) => void): Promise<void> {
  await journal.migrate();
  let mark = groupCommitMark(journal);
  const one = await appendsPerSecond(journal, 1, "one");
  print(`${name}: single-event appends, 1 actor:    ${one.toFixed(0).padStart(7)} /s`);
  print(`${name}:   ${groupCommitLine(journal, mark)}`);
  mark = groupCommitMark(journal);
  const fifty = await appendsPerSecond(journal, 50, "fifty");
  print(`${name}: single-event appends, 50 actors:  ${fifty.toFixed(0).padStart(7)} /s`);
  print(`${name}:   ${groupCommitLine(journal, mark)}`);
  const writeStarted = performance.now();
  await writeBigStream(journal, "counter/big");
  const writeMs = performance.now() - writeStarted;
  print(`${name}: wrote ${RECOVERY_EVENTS} events in ${BATCH}-event commits in ${writeMs.toFixed(0)} ms`);
  const full = await timeRecovery(journal, "counter/big", false);
  print(`${name}: recovery of ${RECOVERY_EVENTS} events, full replay:      ${full.toFixed(0).padStart(6)} ms`);
  const snap = await timeRecovery(journal, "counter/big", true);
  print(
    `${name}: recovery of ${RECOVERY_EVENTS} events, snapshot + ${RECOVERY_EVENTS - SNAPSHOT_AT} tail: ${snap.toFixed(0).padStart(6)} ms`,
  );
}

export async function benchJournal(print: (line: string) => void): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "oncely-bench-"));
  const sqlite = sqliteJournal({ path: join(dir, "bench.db") });
  try {
    await benchBackend("sqlite (WAL, synchronous=FULL)", sqlite, print);
  } finally {
    await sqlite.close();
    rmSync(dir, { recursive: true, force: true });
  }

  const url = process.env.ONCELY_BENCH_PG_URL ?? "postgres://postgres@127.0.0.1:5432/test";
  const admin = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3_000 });
  try {
    await admin.connect();
  } catch (error) {
    print(`postgres: skipped, ${url} unreachable: ${error instanceof Error ? error.message : String(error)}`);
    return;
  }
  const schema = `bench_${process.pid}_${Date.now().toString(36)}`;
  const journal = postgresJournal({ connectionString: url, schema, max: 10 });
  try {
    await benchBackend("postgres", journal, print);
  } finally {
    await journal.close();
    await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await admin.end();
  }
}
