import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { defineActor } from "../src/core/actor.js";
import type { EffectOutcome, Typed } from "../src/core/decider.js";
import { silentLogger } from "../src/core/logger.js";
import { Runtime } from "../src/core/runtime.js";
import { Dispatcher } from "../src/effects/dispatcher.js";
import { succeeded } from "../src/effects/types.js";
import type { Journal } from "../src/journal/types.js";
import { SliceLeaseManager } from "../src/ownership/lease-manager.js";
import { groupCommitLine, groupCommitMark } from "./group-commit-stats.js";
import {
  CallLedger,
  describeFigures,
  ORDER_STEPS,
  orderKey,
  type PgClientClass,
  parseWorkflowArgs,
  runAsChild,
  runWorkload,
  type WorkflowFigures,
  type WorkflowOptions,
  warmupOf,
} from "./workflow-figures.js";

/**
 * The order workflow on oncely: an order actor runs four sequential effects (charge, confirmation
 * mail, picklist, shipping mail), each started by the previous one's outcome. An order's latency
 * runs from sending `Place` to the commit of the shipping mail's outcome.
 */

const PG_URL = process.env.ONCELY_BENCH_PG_URL ?? "postgres://postgres@127.0.0.1:5432/test";

type OrderCommand = { type: "Place" };
type OrderEvent = { type: "Placed" } | { type: "StepDone"; step: number };

const effectOf = (orderId: string, step: number) => {
  const kind = ORDER_STEPS[step] as (typeof ORDER_STEPS)[number];
  return { kind, key: orderKey(orderId, kind), input: { orderId } };
};

export const orderActor = defineActor<{ done: number; placed: boolean }, OrderCommand | EffectOutcome, OrderEvent>({
  type: "order",
  initialState: () => ({ done: 0, placed: false }),
  evolve: (state, event) =>
    event.type === "Placed" ? { ...state, placed: true } : { ...state, done: Math.max(state.done, event.step + 1) },
  decide(command, state, { id }) {
    if (command.type === "Place") {
      if (state.placed) return {};
      return { events: [{ type: "Placed" }], effects: [effectOf(id, 0)] };
    }
    if (command.type === "oncely.effect.succeeded") {
      const step = ORDER_STEPS.indexOf(command.kind as (typeof ORDER_STEPS)[number]);
      if (step < 0 || step < state.done) return {};
      return {
        events: [{ type: "StepDone", step }],
        effects: step + 1 < ORDER_STEPS.length ? [effectOf(id, step + 1)] : [],
      };
    }
    return {};
  },
});

const LAST_STEP = ORDER_STEPS[ORDER_STEPS.length - 1] as string;

async function runOnJournal(
  journal: Journal,
  system: string,
  options: WorkflowOptions,
  sqlClient?: PgClientClass,
): Promise<WorkflowFigures> {
  // ONCELY_BENCH_FENCED=1: one worker holding every slice by lease, so every commit carries its fence.
  const leases =
    process.env.ONCELY_BENCH_FENCED === "1"
      ? new SliceLeaseManager({ journal, workerId: `bench-${process.pid}`, logger: silentLogger })
      : undefined;
  await leases?.start();
  const runtime = new Runtime({ journal, actors: [orderActor], ...(leases ? { ownership: leases } : {}) });
  const ledger = new CallLedger();
  const finished = new Map<string, () => void>();
  // The dispatcher reports outcomes through this sink: an order is finished once the runtime
  // has committed its last effect's outcome, which is when this send resolves.
  const sink = {
    async send(address: string, command: Typed, sendOptions?: { messageId?: string }) {
      const result = await runtime.send(address, command, sendOptions);
      if (command.type === "oncely.effect.succeeded" && (command as { kind?: string }).kind === LAST_STEP) {
        finished.get(address.slice("order/".length))?.();
      }
      return result;
    },
    // Forwarded, as passing the runtime itself would: the dispatcher is handed its rows at commit.
    handOver: (dispatcher: Parameters<Runtime["handOver"]>[0], active: boolean) => runtime.handOver(dispatcher, active),
  };
  const dispatcher = new Dispatcher({
    journal,
    runtime: sink,
    owner: `bench-workflow-${process.pid}`,
    batchSize: 64,
    concurrency: options.inflight,
    pollIntervalMs: 50,
    handlers: ORDER_STEPS.map((kind) => ({
      kind,
      policy: { providerDedups: true, timeoutMs: 5_000, leaseMs: 30_000 },
      run: async (_input: unknown, { idempotencyKey }: { idempotencyKey: string }) => {
        ledger.record(idempotencyKey);
        return succeeded({ ok: true });
      },
    })),
  });
  dispatcher.start();
  const mark = groupCommitMark(journal);
  try {
    const { ids, ...measured } = await runWorkload(
      options,
      async (id) => {
        const done = new Promise<void>((resolve) => finished.set(id, resolve));
        // A fresh order id: decided without a read of its (empty) stream, as the shop places its orders.
        await runtime.send(`order/${id}`, { type: "Place" }, { expectNew: true });
        await done;
        finished.delete(id);
      },
      sqlClient,
    );
    return {
      system: leases ? `${system} (fenced)` : system,
      orders: options.orders,
      inflight: options.inflight,
      ...measured,
      exactlyOnce: ledger.check(ids),
      groupCommit: groupCommitLine(journal, mark),
    };
  } finally {
    await dispatcher.stop();
    await leases?.stop();
    runtime.close();
  }
}

/**
 * The runtime with no store: the in-memory journal of `oncely/testing` (not durable; it copies every
 * row it keeps). Not one of the compared systems: a floor for what the actors, the dispatcher and
 * this bench cost in one process, whatever journal they run on.
 */
export async function runOncelyMemory(options: WorkflowOptions): Promise<WorkflowFigures> {
  const { memoryJournal } = await import("../src/journal/memory.js");
  return runOnJournal(memoryJournal(), "oncely in-memory (test journal)", options);
}

/** oncely on the SQLite journal, in a temporary file removed afterwards. */
export async function runOncelySqlite(options: WorkflowOptions): Promise<WorkflowFigures> {
  const { sqliteJournal } = await import("../src/sqlite/index.js");
  const dir = mkdtempSync(join(tmpdir(), "oncely-bench-workflow-"));
  const journal = sqliteJournal({ path: join(dir, "workflow.db") });
  try {
    await journal.migrate();
    return await runOnJournal(journal, "oncely SQLite", options);
  } finally {
    await journal.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** oncely on the PostgreSQL journal, in a fresh schema of the `test` database dropped afterwards. */
export async function runOncelyPostgres(options: WorkflowOptions): Promise<WorkflowFigures> {
  const { postgresJournal } = await import("../src/postgres/index.js");
  const schema = `bench_workflow_${process.pid}_${Date.now().toString(36)}`;
  const admin = new pg.Client({ connectionString: PG_URL, connectionTimeoutMillis: 3_000 });
  await admin.connect();
  try {
    await admin.query(`CREATE SCHEMA "${schema}"`);
    const journal = postgresJournal({ connectionString: PG_URL, schema });
    try {
      await journal.migrate();
      return await runOnJournal(journal, "oncely PostgreSQL", options, pg.Client);
    } finally {
      await journal.close();
    }
  } finally {
    await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => {});
    await admin.end();
  }
}

/** `npm run bench -- workflow`: the order workflow on both oncely journals, in this process. */
export async function benchWorkflow(print: (line: string) => void): Promise<void> {
  const options = parseWorkflowArgs(process.argv.slice(2));
  print(
    `order workflow: 4 sequential effects per order, ${options.orders} orders (after a warm-up of ` +
      `${warmupOf(options)}), ${options.inflight} in flight; ` +
      "latency = start → last outcome committed; SQL counted on the client (pg Client.query)",
  );
  print(describeFigures(await runOncelyPostgres(options)));
  print(describeFigures(await runOncelySqlite(options)));
}

const RUNS = { postgres: runOncelyPostgres, sqlite: runOncelySqlite, memory: runOncelyMemory };

// Run alone or as a peers child: `npx tsx bench/workflow.ts postgres|sqlite|memory [--orders N --inflight N]`
if (import.meta.url === `file://${process.argv[1]}`) {
  const backend = process.argv[2] ?? "";
  if (!Object.hasOwn(RUNS, backend)) {
    process.stderr.write(
      `usage: tsx bench/workflow.ts ${Object.keys(RUNS).join("|")} [--orders N] [--inflight N] [--warmup N]\n`,
    );
    process.exit(2);
  }
  await runAsChild(RUNS[backend as keyof typeof RUNS]);
}
