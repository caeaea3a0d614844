import { readFileSync } from "node:fs";
import { performance } from "node:perf_hooks";

/**
 * The order workflow every system runs in `npm run bench -- workflow` and `-- peers`, and what is
 * measured of it. One module so that oncely, DBOS and Restate are driven, timed and checked by
 * the same code: only the "start one order and wait for its last outcome" function differs.
 */

/** The four sequential effects of one order, in order. */
export const ORDER_STEPS = ["charge", "confirmation-mail", "picklist", "shipping-mail"] as const;
export type OrderStep = (typeof ORDER_STEPS)[number];

export const orderKey = (orderId: string, step: OrderStep): string => `order:${orderId}:${step}`;

export interface WorkflowOptions {
  orders: number;
  inflight: number;
  /**
   * Orders run before the timed ones (default: `inflight`). Longer, the figures leave out the
   * first orders' JIT compilation and cold caches, for every system alike.
   */
  warmup?: number;
}

export const DEFAULT_WORKFLOW_OPTIONS: WorkflowOptions = { orders: 1_000, inflight: 50 };

/** How many warm-up orders a run makes before its timed ones. */
export const warmupOf = (options: WorkflowOptions): number =>
  options.warmup ?? Math.min(options.inflight, options.orders);

/** What one system's run produced; serialisable, since peers run in child processes. */
export interface WorkflowFigures {
  system: string;
  orders: number;
  inflight: number;
  seconds: number;
  /** Per order, ms from start to the last effect's outcome recorded. */
  latencies: number[];
  exactlyOnce: ExactlyOnceCheck;
  /** SQL statements and commits counted on the client over the timed orders (absent where there is no SQL). */
  sql?: SqlCount;
  /** oncely only: the group-commit batch sizes seen over the run (warm-up included). */
  groupCommit?: string;
  /** CPU spent over the timed orders (absent where /proc/stat cannot be read). */
  cpu?: CpuSpent;
}

/**
 * CPU over the timed orders: the whole machine's (every process: the system's client, its server,
 * the database, the kernel) and this process's own. Runs go one at a time, so the machine's figure
 * is what the system under test cost, plus whatever else the machine was doing (a quiet machine
 * idles at about 1% here). Less swayed than orders/s by a slow round, and comparable across systems
 * whose work splits differently between client and server.
 */
export interface CpuSpent {
  /** Core-seconds the machine was busy: the busy share of /proc/stat's ticks × cores × wall seconds. */
  machineSeconds: number;
  /** This process's user + system CPU (`process.cpuUsage`). */
  processSeconds: number;
}

export interface ExactlyOnceCheck {
  ok: boolean;
  /** e.g. "4000/4000 keys called exactly once". */
  summary: string;
}

/**
 * Records each handler call under its key and counts calls per key. The check demands every
 * expected key called exactly once and no other key called at all.
 */
export class CallLedger {
  private readonly calls = new Map<string, number>();

  record(key: string): void {
    this.calls.set(key, (this.calls.get(key) ?? 0) + 1);
  }

  check(orderIds: readonly string[]): ExactlyOnceCheck {
    const expected = new Set(orderIds.flatMap((id) => ORDER_STEPS.map((step) => orderKey(id, step))));
    let once = 0;
    const problems: string[] = [];
    for (const key of expected) {
      const n = this.calls.get(key) ?? 0;
      if (n === 1) once++;
      else if (problems.length < 5) problems.push(`${key} called ${n}×`);
    }
    for (const [key, n] of this.calls) {
      if (!expected.has(key) && problems.length < 5) problems.push(`unexpected key ${key} called ${n}×`);
    }
    const stray = [...this.calls.keys()].filter((key) => !expected.has(key)).length;
    const ok = once === expected.size && stray === 0;
    return {
      ok,
      summary: `${once}/${expected.size} keys called exactly once${stray > 0 ? `, ${stray} unexpected keys` : ""}${
        problems.length > 0 ? ` (${problems.join("; ")})` : ""
      }`,
    };
  }
}

/** Unique order ids for one run, so repeated runs on one database never share a key. */
const orderIds = (tag: string, orders: number): string[] => Array.from({ length: orders }, (_, i) => `${tag}-${i + 1}`);

/**
 * Runs `startOrder` for every id with at most `inflight` orders at a time; each call resolves
 * when that order's last outcome is recorded. Returns wall time and per-order latencies.
 */
async function driveOrders(
  ids: readonly string[],
  inflight: number,
  startOrder: (orderId: string) => Promise<void>,
): Promise<{ seconds: number; latencies: number[] }> {
  const latencies: number[] = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: Math.min(inflight, ids.length) }, async () => {
      while (next < ids.length) {
        const id = ids[next++] as string;
        const at = performance.now();
        await startOrder(id);
        latencies.push(performance.now() - at);
      }
    }),
  );
  return { seconds: (performance.now() - started) / 1000, latencies };
}

/**
 * The machine's busy and total ticks summed over its CPUs, and how many CPUs /proc/stat counts (one
 * `cpuN` line each: the same CPUs the ticks are summed over, whatever a container's CPU limit tells
 * Node); undefined where /proc/stat cannot be read.
 */
function machineTicks(): { busy: number; total: number; cpus: number } | undefined {
  try {
    const lines = readFileSync("/proc/stat", "utf8").split("\n");
    const first = lines[0] ?? "";
    if (!first.startsWith("cpu ")) return undefined;
    // user nice system idle iowait irq softirq steal (guest time is already counted in user)
    const ticks = first.trim().split(/\s+/).slice(1, 9).map(Number);
    const total = ticks.reduce((a, b) => a + b, 0);
    const idle = (ticks[3] ?? 0) + (ticks[4] ?? 0);
    return { busy: total - idle, total, cpus: lines.filter((line) => /^cpu\d+ /.test(line)).length };
  } catch {
    return undefined;
  }
}

/** Starts measuring CPU; the returned function reads what was spent since, over `seconds` of wall time. */
function measureCpu(): (seconds: number) => CpuSpent | undefined {
  const machine = machineTicks();
  const own = process.cpuUsage();
  return (seconds) => {
    const now = machineTicks();
    const spent = process.cpuUsage(own);
    if (machine === undefined || now === undefined || now.total === machine.total) return undefined;
    const busyShare = (now.busy - machine.busy) / (now.total - machine.total);
    return {
      machineSeconds: busyShare * now.cpus * seconds,
      processSeconds: (spent.user + spent.system) / 1e6,
    };
  };
}

/** CPU ms per timed order: the machine's, and this process's own. */
export const cpuPerOrder = (f: WorkflowFigures): { machine: number; process: number } | undefined =>
  f.cpu === undefined
    ? undefined
    : { machine: (1000 * f.cpu.machineSeconds) / f.orders, process: (1000 * f.cpu.processSeconds) / f.orders };

/**
 * One system's measured run: first a warm-up (`warmupOf`: `inflight` orders unless told; connections, caches, a
 * server's partitions becoming ready), then `orders` orders timed, with SQL statements counted
 * over the timed part when `sqlClient` (the `pg` module's Client class the system uses) is given.
 * Returns every order id started (warm-up included) for the exactly-once check.
 */
export async function runWorkload(
  options: WorkflowOptions,
  startOrder: (orderId: string) => Promise<void>,
  sqlClient?: PgClientClass,
): Promise<{ ids: string[]; seconds: number; latencies: number[]; sql?: SqlCount; cpu?: CpuSpent }> {
  const tag = `${Date.now().toString(36)}${process.pid}`;
  const warmup = orderIds(`${tag}w`, warmupOf(options));
  await driveOrders(warmup, options.inflight, startOrder);
  const ids = orderIds(tag, options.orders);
  const counter = sqlClient === undefined ? undefined : countSql(sqlClient);
  try {
    const cpuSince = measureCpu();
    const measured = await driveOrders(ids, options.inflight, startOrder);
    const cpu = cpuSince(measured.seconds);
    return {
      ids: [...warmup, ...ids],
      ...measured,
      ...(counter === undefined ? {} : { sql: counter.read() }),
      ...(cpu === undefined ? {} : { cpu }),
    };
  } finally {
    counter?.stop();
  }
}

export const percentile = (values: readonly number[], p: number): number => {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number;
};

export const ordersPerSecond = (f: WorkflowFigures): number => f.orders / f.seconds;

export function describeFigures(f: WorkflowFigures): string {
  const sql =
    f.sql === undefined
      ? ""
      : `  SQL round trips/workflow ${(f.sql.roundTrips / f.orders).toFixed(1)}, commits/workflow ${(
          f.sql.commits / f.orders
        ).toFixed(1)}`;
  const perOrder = cpuPerOrder(f);
  const cpu =
    perOrder === undefined
      ? ""
      : `  CPU/order ${perOrder.machine.toFixed(2)} ms (this process ${perOrder.process.toFixed(2)} ms)`;
  return (
    `${f.system.padEnd(22)} ${ordersPerSecond(f).toFixed(0).padStart(6)} orders/s  (${f.orders} in ${f.seconds.toFixed(2)} s, ` +
    `${f.inflight} in flight)  p50=${percentile(f.latencies, 50).toFixed(1)} ms p99=${percentile(f.latencies, 99).toFixed(1)} ms` +
    `${sql}${cpu}  exactly once: ${f.exactlyOnce.ok ? "OK" : "FAILED"} ${f.exactlyOnce.summary}` +
    (f.groupCommit === undefined ? "" : `\n${"".padEnd(23)}${f.groupCommit}`)
  );
}

// ---------------------------------------------------------------------------------------------
// SQL statements counted on the client

/** The shape of the `pg` module's Client class that the counter patches. */
export interface PgClientClass {
  prototype: { query: (...args: unknown[]) => unknown };
}

export interface SqlCount {
  roundTrips: number;
  commits: number;
}

const sqlText = (first: unknown): string => {
  if (typeof first === "string") return first;
  if (first !== null && typeof first === "object" && "text" in first && typeof first.text === "string")
    return first.text;
  return "";
};

/**
 * A statement that writes, sent outside BEGIN…COMMIT, is a transaction of its own that commits;
 * so is a call of oncely's group-commit function (one transaction for a whole batch).
 */
const WRITES = /\b(insert\s+into|update\s+\S+\s+set|delete\s+from|merge\s+into)\b|\boncely_commit\w*\s*\(/i;

/**
 * Calls `seen` with every statement sent through `Client` (its text, the call's arguments, and the
 * client sending it) until the returned function is called. One patch of `Client.prototype.query`
 * for every bench that watches the SQL a system sends (the counter below, the commit replay).
 */
export function watchSql(
  Client: PgClientClass,
  seen: (text: string, args: readonly unknown[], client: object) => void,
): () => void {
  const original = Client.prototype.query;
  Client.prototype.query = function watched(this: object, ...args: unknown[]) {
    seen(sqlText(args[0]), args, this);
    return original.apply(this, args);
  };
  return () => {
    Client.prototype.query = original;
  };
}

/**
 * Counts every statement sent through a `pg` module's clients (pools use the same clients, so
 * each round trip counts once), and the commits among them: each COMMIT, plus each writing
 * statement sent outside an explicit transaction. Counted on the client because the `test`
 * database is shared with other work, so pg_stat_database deltas would include foreign traffic.
 * Not counted as a commit: a bare `SELECT fn()` whose function writes, except oncely's own group-commit
 * function. Call `stop()` to restore.
 */
export function countSql(Client: PgClientClass): { read(): SqlCount; stop(): void } {
  const inTransaction = new WeakSet<object>();
  const count: SqlCount = { roundTrips: 0, commits: 0 };
  const stop = watchSql(Client, (sent, _args, client) => {
    const text = sent.trimStart();
    count.roundTrips++;
    if (/^begin\b|^start\s+transaction\b/i.test(text)) inTransaction.add(client);
    else if (/^commit\b|^end\b/i.test(text)) {
      count.commits++;
      inTransaction.delete(client);
    } else if (/^rollback\b/i.test(text)) inTransaction.delete(client);
    else if (!inTransaction.has(client) && WRITES.test(text)) count.commits++;
  });
  return { read: () => ({ ...count }), stop };
}

// ---------------------------------------------------------------------------------------------
// One system's run as a child process: `--orders N --inflight N`, one `RESULT <json>` line out

const RESULT_PREFIX = "RESULT ";

export function parseWorkflowArgs(argv: readonly string[]): WorkflowOptions & { rounds: number } {
  const value = (name: string, fallback: number): number => {
    const at = argv.indexOf(`--${name}`);
    if (at === -1) return fallback;
    const raw = argv[at + 1];
    const n = Number(raw);
    if (!Number.isInteger(n) || n < 1) throw new Error(`--${name} needs a positive integer, got ${raw ?? "nothing"}`);
    return n;
  };
  const orders = value("orders", DEFAULT_WORKFLOW_OPTIONS.orders);
  const inflight = value("inflight", DEFAULT_WORKFLOW_OPTIONS.inflight);
  return {
    orders,
    inflight,
    warmup: value("warmup", Math.min(inflight, orders)),
    rounds: value("rounds", 3),
  };
}

/**
 * In a child process: run once with the options on the command line and print the result line.
 * Resolves once the line is handed to the OS: a child that exits right after (the Restate run
 * does) would otherwise cut a line longer than the pipe's buffer (16,000 orders' latencies are
 * about 300 kB; measured: cut at 219 kB).
 */
export async function runAsChild(run: (options: WorkflowOptions) => Promise<WorkflowFigures>): Promise<void> {
  const figures = await run(parseWorkflowArgs(process.argv.slice(2)));
  await new Promise<void>((resolve, reject) =>
    process.stdout.write(`${RESULT_PREFIX}${JSON.stringify(figures)}\n`, (error) =>
      error ? reject(error) : resolve(),
    ),
  );
}

export function parseResultLine(stdout: string): WorkflowFigures | undefined {
  const line = stdout
    .split("\n")
    .reverse()
    .find((l) => l.startsWith(RESULT_PREFIX));
  return line === undefined ? undefined : (JSON.parse(line.slice(RESULT_PREFIX.length)) as WorkflowFigures);
}
