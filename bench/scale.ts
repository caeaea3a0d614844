import { readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { runDemo } from "../examples/shop/demo/run-demo.js";
import { requireSliceCount } from "../src/core/slices.js";
import { serverCpu, serverCpuSince } from "./server-cpu.js";

/**
 * `npm run bench -- scale --workers 1,2,3`: the shop end to end (the demo's run, no faults, no kills,
 * no cancels, stock-outs or short shipments) once per number of worker processes, one after another
 * in one run, so the figures compare. Options: `--orders N` (default 300), `--db <postgres url>`,
 * `--transport nats|in-process` (default nats), `--nats-url`, `--rate R` (orders/s offered: one order every
 * 1000/R ms; default as fast as the shop accepts them, at most 100 unfinished), `--no-peers` (several workers
 * forward a request that reached the wrong worker through the journal only, not straight to the owner's peer
 * port first), `--slices N` (the journal's slice count, a power of two; default 64: with several workers each
 * owned slice is one NATS durable per context). Figures only, no assertion.
 *
 * Without `--rate` the client keeps up to 100 orders open, so the shop is saturated and p50 is mostly queueing
 * (Little's law: open orders / orders per second). With `--rate` below the saturated rate, p50/p99 are the
 * pipeline's own latency at that load.
 *
 * Per N: orders/s (first order placed -> last order terminal), p50/p99 placed -> terminal, CPU per order
 * (the workers' processes, from /proc/<pid>/stat, from the first order to the last order's end, the audit
 * after it left out, as for every figure but the commands and conflicts; PostgreSQL's and NATS's servers when
 * they run on this machine, "-" otherwise (bench/server-cpu.ts); the demo process itself:
 * client and providers; and the whole machine from /proc/stat, which counts everything else running),
 * commands and cross-worker version conflicts per 1,000 orders, commands forwarded to another worker (straight
 * to its peer port, and through the journal) per 1,000 orders (the workers' /metrics), and PostgreSQL
 * transactions committed per order (pg_stat_database of the database: other users of it count too).
 */

interface ScaleOptions {
  workers: number[];
  orders: number;
  db: string;
  transport: "nats" | "in-process";
  natsUrl: string;
  /** Orders per second offered; undefined: as fast as the shop accepts them. */
  rate: number | undefined;
  /** False with `--no-peers`: several workers forward through the journal only. */
  peers: boolean;
  /** `--slices N`: the journal's slice count (default the journal's, 64); each slice is a NATS durable per context. */
  slices: number | undefined;
}

export function parseScaleArgs(argv: readonly string[]): ScaleOptions {
  const value = (name: string): string | undefined => {
    const at = argv.indexOf(`--${name}`);
    return at === -1 ? undefined : argv[at + 1];
  };
  const workersRaw = value("workers") ?? "1,2,3";
  const workers = workersRaw.split(",").map((w) => Number(w.trim()));
  if (workers.some((w) => !Number.isInteger(w) || w < 1 || w > 16)) {
    throw new Error(`--workers needs a comma-separated list of 1 to 16, got "${workersRaw}"`);
  }
  const orders = Number(value("orders") ?? 300);
  if (!Number.isInteger(orders) || orders < 1) throw new Error(`--orders needs a positive integer, got ${orders}`);
  const transport = value("transport") ?? "nats";
  if (transport !== "nats" && transport !== "in-process") {
    throw new Error(`--transport must be nats or in-process, got "${transport}"`);
  }
  const db = value("db") ?? process.env.ONCELY_BENCH_PG_URL ?? "postgres://postgres@127.0.0.1:5432/test";
  if (!/^postgres(ql)?:\/\//.test(db)) throw new Error(`--db must be a postgres:// URL, got "${db}"`);
  const rateRaw = value("rate");
  const rate = rateRaw === undefined ? undefined : Number(rateRaw);
  if (rate !== undefined && !(Number.isFinite(rate) && rate > 0 && rate <= 100_000)) {
    throw new Error(`--rate needs orders per second above 0 (at most 100000), got "${rateRaw}"`);
  }
  const slicesRaw = value("slices");
  let slices: number | undefined;
  try {
    slices = slicesRaw === undefined ? undefined : requireSliceCount(Number(slicesRaw));
  } catch (error) {
    throw new Error(`--slices "${slicesRaw}": ${(error as Error).message}`);
  }
  return {
    workers,
    orders,
    db,
    slices,
    transport,
    natsUrl: value("nats-url") ?? "nats://127.0.0.1:4222",
    rate,
    peers: !argv.includes("--no-peers"),
  };
}

/** The journal URL the workers open: `?slices=N` when `--slices` says (see `openJournal`). */
function withSlices(db: string, slices: number | undefined): string {
  if (slices === undefined) return db;
  const url = new URL(db);
  url.searchParams.set("slices", String(slices));
  return url.toString();
}

/** Busy and total jiffies of the whole machine (/proc/stat's first line). */
function machineTicks(): { busy: number; total: number } {
  try {
    const fields = (readFileSync("/proc/stat", "utf8").split("\n")[0] ?? "").trim().split(/\s+/).slice(1).map(Number);
    const total = fields.reduce((a, b) => a + b, 0);
    const idle = (fields[3] ?? 0) + (fields[4] ?? 0);
    return { busy: total - idle, total };
  } catch {
    return { busy: 0, total: 0 };
  }
}

async function committedTransactions(db: string): Promise<number> {
  const url = new URL(db);
  url.search = "";
  const client = new pg.Client({ connectionString: url.toString() });
  await client.connect();
  try {
    const result = await client.query<{ n: string }>(
      "SELECT xact_commit::text AS n FROM pg_stat_database WHERE datname = current_database()",
    );
    return Number(result.rows[0]?.n ?? 0);
  } finally {
    await client.end();
  }
}

export async function benchScale(print: (line: string) => void): Promise<void> {
  const options = parseScaleArgs(process.argv.slice(2));
  const schema = `oncely_bench_scale_${process.pid}`;
  print(
    `the shop end to end, ${options.orders} orders per run, PostgreSQL + ${options.transport}, no faults, no kills; workers ${options.workers.join(", ")}; ${options.rate === undefined ? "orders as fast as the shop accepts them (at most 100 open: p50 is mostly queueing)" : `${options.rate} orders/s offered`}`,
  );
  print(
    "workers | orders/s | p50 ms | p99 ms | worker CPU ms/order | demo CPU ms/order | postgres CPU ms/order | nats CPU ms/order | machine busy ms/order | commands/order | conflicts/1,000 orders | forwards/1,000 orders (peer, journal) | pg commits/order | audit",
  );
  try {
    for (const workers of options.workers) {
      const machineBefore = machineTicks();
      const serversBefore = serverCpu();
      const demoBefore = process.cpuUsage();
      const commitsBefore = await committedTransactions(options.db);
      const closingFigures = async () => ({
        machine: machineTicks(),
        servers: serverCpu(),
        demoCpu: process.cpuUsage(demoBefore),
        commits: await committedTransactions(options.db),
      });
      let ended: Awaited<ReturnType<typeof closingFigures>> | undefined;
      const result = await runDemo({
        orders: options.orders,
        seed: 1,
        faults: "none",
        db: withSlices(options.db, options.slices),
        pgSchema: schema,
        sqlitePath: join(tmpdir(), `oncely-bench-scale-${process.pid}`, "unused.db"),
        transport: options.transport,
        natsUrl: options.natsUrl,
        workers,
        kills: 0,
        cancelRate: 0,
        outOfStockRate: 0,
        shortShipRate: 0,
        arrivalMs: options.rate === undefined ? undefined : 1000 / options.rate,
        peers: options.peers,
        // Closing figures when the last order ended: the audit's reads after it are not the orders' work.
        onOrdersEnded: async () => {
          ended = await closingFigures();
        },
      });
      const closing = ended ?? (await closingFigures());
      const commits = closing.commits - commitsBefore;
      const demoCpu = closing.demoCpu;
      const machineAfter = closing.machine;
      const servers = serverCpuSince(serversBefore, closing.servers);
      const t = result.throughput;
      const orders = t?.orders ?? 0;
      const perOrder = (x: number) => (orders > 0 ? (x / orders).toFixed(1) : "-");
      const workerCpu = result.workerFigures.reduce((n, w) => n + w.cpuMs, 0);
      const conflicts = result.workerFigures.reduce((n, w) => n + w.versionConflicts, 0);
      const commands = result.workerFigures.reduce((n, w) => n + w.commands, 0);
      const toPeers = result.workerFigures.reduce((n, w) => n + w.sentToPeer, 0);
      const throughJournal = result.workerFigures.reduce((n, w) => n + w.forwardedThroughJournal, 0);
      // jiffies are 10 ms each (USER_HZ 100).
      const machineBusyMs = (machineAfter.busy - machineBefore.busy) * 10;
      const missing = result.workerFigures.filter((w) => w.metricsError).map((w) => w.metricsError);
      print(
        [
          workers,
          t ? t.ordersPerSecond.toFixed(1) : "-",
          t ? Math.round(t.p50Ms) : "-",
          t ? Math.round(t.p99Ms) : "-",
          perOrder(workerCpu),
          perOrder((demoCpu.user + demoCpu.system) / 1000),
          servers.postgresMs === undefined ? "-" : perOrder(servers.postgresMs),
          servers.natsMs === undefined ? "-" : perOrder(servers.natsMs),
          perOrder(machineBusyMs),
          perOrder(commands),
          orders > 0 ? ((1000 * conflicts) / orders).toFixed(1) : "-",
          orders > 0
            ? `${Math.round((1000 * toPeers) / orders)}, ${Math.round((1000 * throughJournal) / orders)}`
            : "-",
          perOrder(commits),
          result.report.violated.length === 0 ? "clean" : `FAILED: ${result.report.violated.join(", ")}`,
        ].join(" | "),
      );
      if (missing.length > 0) print(`  (no /metrics from ${missing.length} worker(s): ${missing.join("; ")})`);
    }
  } finally {
    const url = new URL(options.db);
    url.search = "";
    const client = new pg.Client({ connectionString: url.toString() });
    await client.connect();
    await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).finally(() => client.end());
    rmSync(join(tmpdir(), `oncely-bench-scale-${process.pid}`), { recursive: true, force: true });
  }
}
