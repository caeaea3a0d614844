import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import pg from "pg";
import { defineActor } from "../src/core/actor.js";
import type { Typed } from "../src/core/decider.js";
import { Runtime } from "../src/core/runtime.js";
import { Dispatcher } from "../src/effects/dispatcher.js";
import { succeeded } from "../src/effects/types.js";
import type { Journal } from "../src/journal/types.js";
import { groupCommitLine, groupCommitMark } from "./group-commit-stats.js";

/**
 * Effects end to end: intent committed → dispatcher claims → handler → completion committed
 * (with the outbox row done in the same commit). Closed loop per actor: each actor requests its
 * next effect when the previous one completed, so "50 actors" means 50 effects in flight.
 */

const PG_URL = process.env.ONCELY_TEST_PG_URL ?? "postgres://postgres@127.0.0.1:5432/test";

const benchActor = defineActor<{ n: number }, { type: "Charge"; n: number }, { type: "Requested" | "Done"; n: number }>(
  {
    type: "bench",
    initialState: () => ({ n: 0 }),
    evolve: (state, event) => (event.type === "Requested" ? { n: event.n } : state),
    decide(command, _state, { id }) {
      if (command.type === "Charge") {
        const key = `bench:${id}:${command.n}`;
        return {
          events: [{ type: "Requested", n: command.n }],
          effects: [{ kind: "noop", key, input: { n: command.n } }],
        };
      }
      if (command.type === "oncely.effect.succeeded") return { events: [{ type: "Done", n: 0 }] };
      return {};
    },
  },
);

interface Figures {
  effects: number;
  seconds: number;
  latencies: number[];
}

async function runOne(journal: Journal, actors: number, perActor: number): Promise<Figures> {
  const runtime = new Runtime({ journal, actors: [benchActor] });
  const committedAt = new Map<string, number>();
  const latencies: number[] = [];
  const waiting = new Map<string, () => void>();
  const sink = {
    async send(address: string, command: Typed, options?: { messageId?: string }) {
      const result = await runtime.send(address, command, options);
      if (command.type === "oncely.effect.succeeded") waiting.get((command as unknown as { key: string }).key)?.();
      return result;
    },
    // Forwarded so that the dispatcher is handed its rows at commit (no claim, no wake-up).
    handOver: (dispatcher: Parameters<Runtime["handOver"]>[0], active: boolean) => runtime.handOver(dispatcher, active),
  };
  const dispatcher = new Dispatcher({
    journal,
    runtime: sink,
    owner: `bench-${process.pid}`,
    batchSize: 64,
    concurrency: Math.min(32, Math.max(4, actors)),
    pollIntervalMs: 50,
    handlers: [
      {
        kind: "noop",
        policy: { providerDedups: true, timeoutMs: 5_000, leaseMs: 30_000 },
        run: async (_input, { idempotencyKey }) => {
          const at = committedAt.get(idempotencyKey);
          if (at !== undefined) latencies.push(Math.max(0, performance.now() - at));
          return succeeded({ ok: true });
        },
      },
    ],
  });
  dispatcher.start();
  const started = performance.now();
  const tag = `${Date.now().toString(36)}${actors}`;
  await Promise.all(
    Array.from({ length: actors }, async (_, a) => {
      const address = `bench/${tag}-${a}`;
      for (let n = 1; n <= perActor; n++) {
        const key = `bench:${tag}-${a}:${n}`;
        const done = new Promise<void>((resolve) => waiting.set(key, resolve));
        // From the command to the handler: the intent's commit, then the hand-over (or the claim).
        committedAt.set(key, performance.now());
        await runtime.send(address, { type: "Charge", n });
        await done;
        waiting.delete(key);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  await dispatcher.stop();
  runtime.close();
  return { effects: actors * perActor, seconds, latencies };
}

const percentile = (values: number[], p: number): number => {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number;
};

function report(print: (line: string) => void, backend: string, actors: number, f: Figures): void {
  print(
    `effects ${backend.padEnd(8)} actors=${String(actors).padStart(2)}  ${(f.effects / f.seconds).toFixed(0).padStart(6)} effects/s` +
      `  (${f.effects} in ${f.seconds.toFixed(2)} s)  command→handler p50=${percentile(f.latencies, 50).toFixed(2)} ms` +
      ` p99=${percentile(f.latencies, 99).toFixed(2)} ms`,
  );
}

export async function benchEffects(print: (line: string) => void): Promise<void> {
  print("effects: intent committed → handler → completion committed (closed loop per actor)");
  const { sqliteJournal } = await import("../src/sqlite/index.js");
  const dir = mkdtempSync(join(tmpdir(), "oncely-bench-effects-"));
  try {
    for (const [actors, perActor] of [
      [1, 300],
      [50, 20],
    ] as const) {
      const journal = sqliteJournal({ path: join(dir, `effects-${actors}.db`) });
      await journal.migrate();
      const mark = groupCommitMark(journal);
      report(print, "sqlite", actors, await runOne(journal, actors, perActor));
      print(`  ${groupCommitLine(journal, mark)}`);
      await journal.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }

  const schema = `bench_effects_${process.pid}_${Date.now().toString(36)}`;
  const admin = new pg.Client({ connectionString: PG_URL, connectionTimeoutMillis: 3_000 });
  try {
    await admin.connect();
  } catch (error) {
    print(`effects postgres skipped: ${error instanceof Error ? error.message : String(error)}`);
    return;
  }
  try {
    await admin.query(`create schema "${schema}"`);
    const { postgresJournal } = await import("../src/postgres/index.js");
    for (const [actors, perActor] of [
      [1, 200],
      [50, 20],
    ] as const) {
      const journal = postgresJournal({ connectionString: PG_URL, schema });
      await journal.migrate();
      const mark = groupCommitMark(journal);
      report(print, "postgres", actors, await runOne(journal, actors, perActor));
      print(`  ${groupCommitLine(journal, mark)}`);
      await journal.close();
    }
  } finally {
    await admin.query(`drop schema if exists "${schema}" cascade`).catch(() => {});
    await admin.end();
  }
}

// Run alone: `npx tsx bench/effects.ts`
if (import.meta.url === `file://${process.argv[1]}`) {
  await benchEffects((line) => console.log(line));
}
