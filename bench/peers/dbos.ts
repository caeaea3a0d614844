import { DBOS } from "@dbos-inc/dbos-sdk";
import pg from "pg";
import {
  CallLedger,
  ORDER_STEPS,
  orderKey,
  runAsChild,
  runWorkload,
  type WorkflowFigures,
  type WorkflowOptions,
} from "../workflow-figures.js";

/**
 * The order workflow on DBOS Transact 5.x: one DBOS workflow with four steps, each recording its
 * call under `order:<id>:<step>`. DBOS keeps its system database in a dedicated database on the
 * same PostgreSQL server, created fresh for the run and dropped afterwards. An order's latency
 * runs from calling the workflow to its return (after the last step's output is checkpointed).
 *
 * Run alone: `npx tsx bench/peers/dbos.ts [--orders N --inflight N]` (after `npm ci --prefix bench/peers`).
 */

const SERVER_URL = process.env.ONCELY_BENCH_PG_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const DATABASE = "oncely_bench_dbos";

const databaseUrl = (name: string): string => {
  const url = new URL(SERVER_URL);
  url.pathname = `/${name}`;
  return url.toString();
};

async function recreateDatabase(drop: boolean, create: boolean): Promise<void> {
  const admin = new pg.Client({ connectionString: SERVER_URL, connectionTimeoutMillis: 3_000 });
  await admin.connect();
  try {
    if (drop) await admin.query(`DROP DATABASE IF EXISTS ${DATABASE} WITH (FORCE)`);
    if (create) await admin.query(`CREATE DATABASE ${DATABASE}`);
  } finally {
    await admin.end();
  }
}

export async function runDbos(options: WorkflowOptions): Promise<WorkflowFigures> {
  const ledger = new CallLedger();
  const orderWorkflow = DBOS.registerWorkflow(
    async (orderId: string) => {
      for (const step of ORDER_STEPS) {
        await DBOS.runStep(
          async () => {
            ledger.record(orderKey(orderId, step));
          },
          { name: step },
        );
      }
    },
    { name: "orderWorkflow" },
  );

  await recreateDatabase(true, true);
  DBOS.setConfig({
    name: "oncely-bench",
    systemDatabaseUrl: databaseUrl(DATABASE),
    runAdminServer: false,
    enableOTLP: false,
    logLevel: "error",
  });
  await DBOS.launch();
  try {
    // Counted over the timed orders: the workflows' statements and DBOS's own polling meanwhile.
    const { ids, ...measured } = await runWorkload(options, (id) => orderWorkflow(id), pg.Client);
    return {
      system: "DBOS",
      orders: options.orders,
      inflight: options.inflight,
      ...measured,
      exactlyOnce: ledger.check(ids),
    };
  } finally {
    await DBOS.shutdown();
    await recreateDatabase(true, false);
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await runAsChild(runDbos);
}
