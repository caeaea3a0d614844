import { randomBytes } from "node:crypto";
import { mkdirSync, rmSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import type { Random } from "oncely";
import { seededRandom } from "oncely/testing";
import pg from "pg";
import { resetShopStream } from "../contexts.js";
import { EFFECT_KINDS } from "../ordering/effects.js";
import { ENDED_STATUSES } from "../ordering/status.js";
import { startEmailProvider } from "../providers/email/server.js";
import { startPaymentProvider } from "../providers/payment/server.js";
import { startWarehouseProvider } from "../providers/warehouse/server.js";
import type { OrderView } from "../service/order-view.js";
import {
  type AuditReport,
  audit,
  type IntegrationView,
  type Ledgers,
  type OperatorSettlement,
  viewDisagreements,
} from "./audit.js";
import { type FaultLevel, faultProfile, incarnationFault, nextKillDelay } from "./faults.js";
import { createPartitionLab } from "./netns.js";
import {
  defaultPartitionPlan,
  type PartitionCut,
  type PartitionedWorkers,
  type PartitionRecord,
  runPartitions,
  settlePartitionRecords,
  throughForwarder,
  urlTarget,
} from "./partition.js";
import { measureThroughput, type Throughput } from "./throughput.js";
import { type WorkerFigures, workerCpuMs, workerFigures } from "./worker-figures.js";
import { freePort, WorkerSupervisor } from "./worker-process.js";

/**
 * The demonstration as a function (the CLI and the e2e test both call it): providers in this
 * process (their ledgers outlive every worker), the shop's worker as a child process killed and
 * restarted on a seeded schedule, N orders placed over HTTP with Idempotency-Keys, the demo as
 * operator for anything that lands in reconciliation, and an audit from the providers' ledgers.
 */

export interface DemoOptions {
  orders: number;
  seed: number;
  faults: FaultLevel;
  /** A postgres:// URL; the demo works in schema `pgSchema` (dropped and recreated first). Unset: SQLite. */
  db?: string | undefined;
  /** Default `oncely_demo`. */
  pgSchema?: string | undefined;
  /** SQLite file (deleted with its -wal/-shm first). Default data/demo.db. */
  sqlitePath?: string | undefined;
  /** The payment provider charges again on every request; the shop may only look charges up. */
  paymentNoIdempotency?: boolean | undefined;
  /** Transport of integration events between the contexts (default in-process, with injected misdelivery). */
  transport?: "in-process" | "nats" | undefined;
  /** Default nats://127.0.0.1:4222. The demo deletes and recreates the stream `SHOP` first. */
  natsUrl?: string | undefined;
  /**
   * Worker processes sharing the journal (default 1). With more than one, the client spreads its
   * requests over them and kills pick a worker at random: the chaos run.
   */
  workers?: number | undefined;
  /**
   * With PostgreSQL: terminate every connection of the shop's workers (pg_terminate_backend) about
   * this often (seeded jitter). Unset: never.
   */
  pgConnectionRestartMs?: number | undefined;
  /** Most worker kills in the run (default: the fault level's). */
  kills?: number | undefined;
  /** Stop placing new orders after this long (ms); the orders placed by then are driven to the end and audited. */
  durationMs?: number | undefined;
  /** Orders in flight at once (default 8). */
  concurrency?: number | undefined;
  /** Order i is sent no earlier than i × arrivalMs after the first (default: the fault level's, 40 ms or 0 without faults). */
  arrivalMs?: number | undefined;
  /** Give up waiting for terminal orders after this long (default 60 s + 300 ms per order). */
  timeoutMs?: number | undefined;
  /**
   * Called once every order ended (or the wait gave up), before the late webhooks and the audit: a
   * benchmark takes its closing figures here, so the audit's reads are not counted as the orders' work.
   */
  onOrdersEnded?: (() => Promise<void> | void) | undefined;
  /**
   * `false`: several workers forward what reaches the wrong one through the journal only, not straight
   * to the owner's peer port first (for comparing the two; default: peers).
   */
  peers?: boolean | undefined;
  /**
   * Fraction of orders the client cancels, at a seeded moment: at once (before payment), a little
   * later (between payment and picklist) or around the shipment. Default `DEMO_CANCEL_RATE`.
   */
  cancelRate?: number | undefined;
  /** Fraction of picklists the warehouse refuses for good (out of stock). Default `DEMO_OUT_OF_STOCK_RATE`. */
  outOfStockRate?: number | undefined;
  /**
   * Fraction of accepted picklists of which the warehouse reports lines it cannot ship, then ships
   * the rest (the order refunds those lines). Default `DEMO_SHORT_SHIP_RATE`.
   */
  shortShipRate?: number | undefined;
  /**
   * Every worker on a network namespace of its own (root and iproute2 needed; PostgreSQL required),
   * reaching PostgreSQL, NATS and the providers through forwarders on its own links; `true` cuts the
   * last worker off from PostgreSQL and then from NATS (`defaultPartitionPlan`), a list cuts as told.
   */
  partition?: boolean | readonly PartitionCut[] | undefined;
  /** Each cut and heal as it happens (a line of text). */
  onPartitionEvent?(line: string): void;
  onProgress?(progress: DemoProgress): void;
}

export interface DemoProgress {
  phase: "starting" | "placing" | "settling" | "auditing" | "done";
  total: number;
  placed: number;
  terminal: number;
  kills: number;
  attention: number;
  /** PostgreSQL connection restarts so far (chaos). */
  pgRestarts: number;
}

/** Integration events between the contexts, summed over worker incarnations. */
export interface IntegrationSummary {
  transport: "in-process" | "nats";
  /** The misdelivery injected by the in-process transport (none with NATS). */
  injected: { duplicateRate: number; maxDelayMs: number; reorderWindow: number } | null;
  published: number;
  /** Events the relays handed to their own worker's consumers at commit (no claim, no log read). */
  handedOver: number;
  /** Deliveries the consumers' (or actors') inboxes recognised as handled before; polled, so a lower bound. */
  duplicatesSuppressedAtLeast: number;
  /** Messages parked ahead of a gap by the sequenced timeline consumer, and released in order (lower bounds). */
  parkedAtLeast: number;
  releasedAtLeast: number;
  /** Journal-wide at the end. */
  parkedAtEnd: number;
  gapsAlerted: number;
  deadLetters: number;
}

export interface DemoResult {
  report: AuditReport;
  /** Cancels the client sent, by the shop's answer (202 cancelled, 200 already, 409 shipped first). */
  cancels: { rate: number; answers: Record<string, number> };
  /** Worker processes that shared the journal. */
  workers: number;
  /** PostgreSQL connection restarts (pg_terminate_backend of every worker connection) survived. */
  pgRestarts: number;
  backend: "sqlite" | "postgres";
  integration: IntegrationSummary;
  durationMs: number;
  /** Where the workers' stderr (warnings) went. */
  workerLog: string;
  timedOut: boolean;
  /** Orders/s end to end and per-order latency; undefined when no order ended. */
  throughput: Throughput | undefined;
  /** How the client sent orders: one every `arrivalMs` at most, `inFlight` requests at once, `maxOpen` orders unfinished. */
  arrival: { arrivalMs: number; inFlight: number; maxOpen: number };
  /** The cuts of a partition run, in order; empty without `partition`. */
  partitions: PartitionRecord[];
  /** Per worker at the end: CPU since the client started placing, and its counters from GET /metrics. */
  workerFigures: WorkerFigures[];
}

const EFFECT_TIMEOUT_MS = 1000;
/** Small, so the default run stays quick, and non-zero, so every run exercises the compensation invariants. */
export const DEMO_CANCEL_RATE = 0.1;
export const DEMO_OUT_OF_STOCK_RATE = 0.05;
export const DEMO_SHORT_SHIP_RATE = 0.05;
/** When the client cancels, after placing: before payment, between payment and picklist, around the 50 ms shipment. */
const CANCEL_DELAYS_MS = [0, 15, 40, 70, 150];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * `promise`, or nothing after `ms`, whichever comes first, leaving no timer behind: a bare `sleep` in
 * the race would hold the process for the rest of its time (minutes after a bench run had printed).
 */
async function within<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<undefined>((r) => {
        timer = setTimeout(() => r(undefined), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

export async function runDemo(options: DemoOptions): Promise<DemoResult> {
  const started = Date.now();
  const profile = faultProfile(options.faults);
  const total = options.orders;
  const progress: DemoProgress = {
    phase: "starting",
    total,
    placed: 0,
    terminal: 0,
    kills: 0,
    attention: 0,
    pgRestarts: 0,
  };
  const workerCount = options.workers ?? 1;
  if (!Number.isInteger(workerCount) || workerCount < 1)
    throw new Error(`workers must be an integer >= 1, got ${workerCount}`);
  if (options.pgConnectionRestartMs !== undefined && !options.db) {
    throw new Error("pgConnectionRestartMs needs a PostgreSQL journal (db)");
  }
  if (options.partition && !options.db) throw new Error("partition needs a PostgreSQL journal (db)");
  const report = () => options.onProgress?.({ ...progress });
  report();

  const sqlitePath = resolve(options.sqlitePath ?? "data/demo.db");
  const workerLog = join(dirname(sqlitePath), "demo-worker.log");
  mkdirSync(dirname(sqlitePath), { recursive: true });
  rmSync(workerLog, { force: true });
  // The workers' connections carry a name of their own, so connection restarts hit exactly them.
  const pgApplicationName = `oncely-demo-${process.pid}-${options.seed}`;
  const databaseUrl = options.db
    ? await freshPostgres(options.db, options.pgSchema ?? "oncely_demo", pgApplicationName)
    : freshSqlite(sqlitePath);
  const transport = options.transport ?? "in-process";
  const natsUrl = options.natsUrl ?? "nats://127.0.0.1:4222";
  // A fresh journal must not meet an earlier run's events: new durables start at the stream's first message.
  if (transport === "nats") await resetShopStream(natsUrl);
  const injected =
    transport === "in-process"
      ? {
          duplicateRate: profile.integration.duplicateRate ?? 0,
          maxDelayMs: profile.integration.maxDelayMs ?? 0,
          reorderWindow: profile.integration.reorderWindow ?? 0,
        }
      : null;

  const closers: (() => Promise<void>)[] = [];
  try {
    const payment = await startPaymentProvider({
      seed: options.seed,
      faults: { ...profile.payment, noIdempotency: options.paymentNoIdempotency ?? false },
      // Deterministic declines: the client makes ~10% of totals end in 13.
      declineAmountsEndingWith: "13",
    });
    closers.push(() => payment.close());
    const email = await startEmailProvider({ seed: options.seed + 1, faults: profile.email });
    closers.push(() => email.close());
    const ports: number[] = [];
    for (let i = 0; i < workerCount; i++) ports.push(await freePort());
    // A partition run: each worker listens on its own namespace's end of its `app` link.
    const lab = options.partition ? await createPartitionLab(workerCount) : undefined;
    if (lab) closers.push(() => lab.close());
    const workerHosts = ports.map((_, i) => lab?.networks[i]?.links.app.namespaceIp ?? "127.0.0.1");
    const workerUrls = ports.map((p, i) => `http://${workerHosts[i]}:${p}`);
    // The warehouse calls one worker back; while that one restarts, it retries.
    const shopUrl = workerUrls[0] as string;
    // The workers' credentials: the operator's admin token and the warehouse's webhook secret.
    const adminToken = `demo_${randomBytes(24).toString("base64url")}`;
    const webhookSecret = randomBytes(24).toString("base64url");
    const peerSecret = randomBytes(24).toString("base64url");
    const warehouse = await startWarehouseProvider({
      webhookSecret,
      seed: options.seed + 2,
      faults: {
        ...profile.warehouse,
        outOfStockRate: options.outOfStockRate ?? DEMO_OUT_OF_STOCK_RATE,
        shortShipRate: options.shortShipRate ?? DEMO_SHORT_SHIP_RATE,
      },
      shopUrl,
      shipDelayMs: 50,
      // Retries for ~60 s: far longer than a worker restart, so no webhook is given up on.
      webhook: { timeoutMs: 2000, maxAttempts: 70, backoffMs: 100, maxBackoffMs: 1000 },
    });
    closers.push(() => warehouse.close());
    // Each worker's view of the services: direct, or through the forwarders on its own links.
    const partitioned: PartitionedWorkers | undefined = lab && { lab, forwarders: [] };
    const serviceEnv: Record<string, string>[] = [];
    for (let i = 0; i < workerCount; i++) {
      const network = lab?.networks[i];
      if (!network || !partitioned) {
        serviceEnv.push({
          DATABASE_URL: databaseUrl,
          PAYMENT_URL: payment.url,
          EMAIL_URL: email.url,
          WAREHOUSE_URL: warehouse.url,
          ...(transport === "nats" ? { NATS_URL: natsUrl } : {}),
        });
        continue;
      }
      const postgres = await network.forward("postgres", urlTarget(databaseUrl, 5432));
      const nats = transport === "nats" ? await network.forward("nats", urlTarget(natsUrl, 4222)) : undefined;
      partitioned.forwarders.push({ postgres, nats });
      const viaApp = async (url: string) => throughForwarder(url, await network.forward("app", urlTarget(url, 80)));
      serviceEnv.push({
        DATABASE_URL: throughForwarder(databaseUrl, postgres),
        PAYMENT_URL: await viaApp(payment.url),
        EMAIL_URL: await viaApp(email.url),
        WAREHOUSE_URL: await viaApp(warehouse.url),
        ...(nats ? { NATS_URL: throughForwarder(natsUrl, nats) } : {}),
      });
    }

    const killRandom = seededRandom(options.seed * 7919 + 1);
    // One budget for both kinds of kill: arming an incarnation at a fault point spends one up front.
    let killBudget = options.kills ?? profile.kills.max;
    const supervisors = ports.map(
      (port, index) =>
        new WorkerSupervisor(
          {
            ...stringEnv(process.env),
            PORT: String(port),
            HOST: workerHosts[index] as string,
            ...serviceEnv[index],
            WAREHOUSE_WEBHOOK_SECRET: webhookSecret,
            ONCELY_ADMIN_TOKEN: adminToken,
            SHOP_URL: workerUrls[index] as string,
            PAYMENT_PROVIDER_DEDUPS: options.paymentNoIdempotency ? "false" : "true",
            EFFECT_TIMEOUT_MS: String(EFFECT_TIMEOUT_MS),
            TRANSPORT: transport,
            // Several workers on PostgreSQL own slices of the actors by leases (docs/design/ownership.md):
            // each runs only its slices' actors, events and effects; what reaches another is forwarded,
            // straight to the owner over its peer port (any free one), through the journal when that fails.
            // The partition lab keeps the journal path alone: its workers sit in network namespaces of their own.
            ...(workerCount > 1 && options.db
              ? {
                  SLICE_LEASES: "1",
                  ...(partitioned || options.peers === false ? {} : { PEER_PORT: "0", PEER_SECRET: peerSecret }),
                }
              : {}),
            ...(injected
              ? {
                  INTEGRATION_DUPLICATE_RATE: String(injected.duplicateRate),
                  INTEGRATION_MAX_DELAY_MS: String(injected.maxDelayMs),
                  INTEGRATION_REORDER_WINDOW: String(injected.reorderWindow),
                }
              : {}),
            GAP_TIMEOUT_MS: String(profile.gapTimeoutMs),
            LOG_LEVEL: process.env.LOG_LEVEL ?? "warn",
          },
          // Incarnations armed to die at a fault point count against the same kill budget.
          () => {
            const fault = killBudget > 0 ? incarnationFault(profile.kills, killRandom) : undefined;
            if (fault) killBudget--;
            return fault;
          },
          workerLog,
          {},
          `demo-worker-${index + 1}`,
          lab?.networks[index]?.exec,
        ),
    );
    closers.push(() => Promise.all(supervisors.map((w) => w.stop())).then(() => undefined));
    await Promise.all(supervisors.map((w) => w.start()));
    const killed = () => supervisors.reduce((n, w) => n + w.killedByParent + w.killedAtFaultPoint, 0);
    const failure = () => supervisors.find((w) => w.failure)?.failure;
    const api = new ShopClient(workerUrls, adminToken);

    // Progress and counters: polled, summed over incarnations by pid (a killed one keeps its last poll).
    const perWorker = new Map<number, { duplicates: number; retried: number }>();
    const integrationPerWorker = new Map<number, IntegrationCounters>();
    let journalWide = { gapsAlerted: 0, deadLetters: 0, parkedNow: 0 };
    const operator: OperatorSettlement[] = [];
    let reconcileWaiting = 0;
    let stopPolling = false;
    const poller = (async () => {
      while (!stopPolling) {
        const askedAt = Date.now();
        const stats = await api.stats().catch(() => undefined);
        // /admin/stats lists every order's version and reads the orders that moved since the last poll
        // (OrderStatuses); the poll still backs off when it grows slow, to leave the worker at least two
        // thirds of its time for the orders themselves. A floor of 100 ms instead of 300 was measured: no
        // faster (three pairs), the client then keeps more orders open.
        const statsMs = Date.now() - askedAt;
        if (stats) {
          perWorker.set(stats.pid, { duplicates: stats.runtime.duplicates, retried: stats.dispatcher?.retried ?? 0 });
          if (stats.integration) {
            integrationPerWorker.set(stats.pid, countersOf(stats.integration));
            journalWide = stats.integration;
          }
          progress.terminal = ENDED_STATUSES.reduce((n, status) => n + (stats.orders.byStatus[status] ?? 0), 0);
          progress.attention = stats.orders.byStatus.attention ?? 0;
          reconcileWaiting = stats.reconciliation;
          if (reconcileWaiting > 0) await settleAsOperator(api, { payment, email, warehouse }, operator);
        }
        progress.kills = killed();
        report();
        await sleep(Math.max(300, 2 * statsMs));
      }
    })();

    // Kills: at seeded moments, only after some progress since the last one, within the budget;
    // with several workers, a random one of them.
    let doneKilling = false;
    const killer = (async () => {
      while (!doneKilling && killBudget > 0) {
        const target = supervisors[Math.floor(killRandom.next() * supervisors.length)] as WorkerSupervisor;
        await target.ready().catch(() => undefined);
        const pid = target.pid;
        const before = progress.placed + progress.terminal;
        await sleep(nextKillDelay(profile.kills, killRandom));
        while (!doneKilling && progress.placed + progress.terminal === before) await sleep(100);
        if (doneKilling || killBudget <= 0) break;
        if (target.pid === pid) {
          killBudget--;
          target.kill();
        }
      }
    })();

    // Chaos: every PostgreSQL connection of the workers terminated, again and again.
    const restartRandom = seededRandom(options.seed * 104_729 + 7);
    const pgRestarter =
      options.pgConnectionRestartMs === undefined || !options.db
        ? Promise.resolve()
        : restartConnections(
            options.db,
            pgApplicationName,
            options.pgConnectionRestartMs,
            restartRandom,
            () => doneKilling,
            () => {
              progress.pgRestarts++;
            },
          );

    // The client: every order with its own Idempotency-Key, retried until the shop answers 201/200.
    progress.phase = "placing";
    const orderRandom = seededRandom(options.seed * 31 + 17);
    const requests = Array.from({ length: total }, (_, i) =>
      orderRequest(i, options.seed, orderRandom, profile.replayRate),
    );
    const placed: { key: string; orderId: string; placedAt: number }[] = [];
    const replayMismatches: string[] = [];
    // Cancels: drawn per order from their own seeded random, sent in the background, awaited before settling.
    const cancelRandom = seededRandom(options.seed * 613 + 5);
    const cancelRate = options.cancelRate ?? DEMO_CANCEL_RATE;
    const cancels: Promise<void>[] = [];
    const cancelAnswers: Record<string, number> = {};
    // Orders arrive at a steady pace rather than all at once, so kills land while orders are still coming in.
    const deadline = started + (options.timeoutMs ?? 60_000 + 300 * total);
    const arrivalMs = options.arrivalMs ?? profile.arrivalMs;
    const inFlight = options.concurrency ?? 8;
    const maxOpen = profile.maxOpenOrders;
    let opened = 0;
    const placingFrom = Date.now();
    const cpuAtStart = new Map(supervisors.map((w) => [w.pid, w.pid === undefined ? 0 : workerCpuMs(w.pid)]));
    const plan =
      options.partition === true ? defaultPartitionPlan(workerCount, transport === "nats") : options.partition;
    let partitionsDone = !partitioned || !plan || plan.length === 0;
    const partitioner =
      partitioned && plan && plan.length > 0
        ? runPartitions(
            plan,
            partitioned,
            placingFrom,
            () => ({ placed: progress.placed, terminal: progress.terminal }),
            (line) => options.onPartitionEvent?.(line),
          ).finally(() => {
            partitionsDone = true;
          })
        : Promise.resolve([] as PartitionRecord[]);
    // Observed now: a failed cut or heal is reported when the run awaits it, not as an unhandled rejection.
    partitioner.catch(() => {});
    const placingUntil = options.durationMs === undefined ? Number.POSITIVE_INFINITY : placingFrom + options.durationMs;
    await forEachLimit(requests, inFlight, async (request) => {
      await sleep(placingFrom + request.index * arrivalMs - Date.now());
      // Checked and counted with no await in between, so concurrent senders never overshoot.
      while (opened - progress.terminal >= maxOpen && Date.now() < deadline) await sleep(20);
      opened++;
      if (Date.now() >= placingUntil) return;
      const placedAt = Date.now();
      const first = await api.placeOrder(request.key, request.body);
      placed.push({ key: request.key, orderId: first.orderId, placedAt });
      progress.placed++;
      const cancelDraw = cancelRandom.next();
      const delay = CANCEL_DELAYS_MS[Math.floor(cancelRandom.next() * CANCEL_DELAYS_MS.length)] ?? 0;
      if (cancelDraw < cancelRate) {
        cancels.push(
          sleep(delay - (Date.now() - placedAt)).then(async () => {
            const status = await api.cancelOrder(first.orderId, `cancel:${request.key}`);
            cancelAnswers[status] = (cancelAnswers[status] ?? 0) + 1;
          }),
        );
      }
      if (request.replay) {
        const again = await api.placeOrder(request.key, request.body);
        if (again.orderId !== first.orderId || !again.replayed) {
          replayMismatches.push(
            `key ${request.key}: ${first.orderId} then ${again.orderId} (replayed: ${again.replayed})`,
          );
        }
      }
    });

    await Promise.all(cancels);
    // Wait for every order to end, acting as operator in the meantime (the poller does that).
    progress.phase = "settling";
    progress.total = placed.length;
    // A partition run also waits for its last heal: the audit never runs with a link still cut.
    while ((progress.terminal < placed.length || !partitionsDone) && Date.now() < deadline && !failure()) {
      await sleep(200);
    }
    const timedOut = progress.terminal < placed.length;
    // The workers' CPU for the orders: up to here, not the late webhooks and the audit after.
    const cpuAtEnd = new Map(supervisors.map((w) => [w.pid, w.pid === undefined ? 0 : workerCpuMs(w.pid)]));
    await options.onOrdersEnded?.();
    doneKilling = true;
    await killer;
    await pgRestarter;
    const partitionRecords = await partitioner;
    const failed = failure();
    if (failed) throw failed;
    // Late and duplicate webhooks may still be on their way: the audit counts them too.
    await within(warehouse.settled(), Math.max(0, deadline + 30_000 - Date.now()));
    await Promise.all(supervisors.map((w) => w.ready()));

    progress.phase = "auditing";
    stopPolling = true;
    await poller;
    report();
    const views: Record<string, OrderView | null> = {};
    const integrationViews: Record<string, IntegrationView | null> = {};
    // The order views are built by other consumers than the orders, with delayed and reordered
    // delivery: they converge later. Read them again (bounded) until they agree with the orders;
    // whatever still disagrees at the end is the audit's to report.
    const convergeBy = Date.now() + 20_000;
    let pending = placed;
    for (;;) {
      await forEachLimit(pending, 8, async ({ orderId }) => {
        views[orderId] = await api.order(orderId);
        integrationViews[orderId] = await api.orderView(orderId);
      });
      pending = pending.filter(({ orderId }) => {
        const order = views[orderId];
        return order != null && viewDisagreements(orderId, order, integrationViews[orderId] ?? null).length > 0;
      });
      if (pending.length === 0 || Date.now() > convergeBy) break;
      await sleep(500);
    }
    const lastStats = await api.stats().catch(() => undefined);
    if (lastStats?.integration) journalWide = lastStats.integration;
    const ledgers: Ledgers = {
      payment: await getJson(`${payment.url}/ledger`),
      email: await getJson(`${email.url}/ledger`),
      warehouse: await getJson(`${warehouse.url}/ledger`),
    };
    const figures = await workerFigures(
      supervisors.map((w, i) => ({ pid: w.pid, url: workerUrls[i] as string })),
      cpuAtStart,
      cpuAtEnd,
    );
    for (const supervisor of supervisors) {
      const pid = supervisor.pid;
      await supervisor.stop();
      const last = supervisor.finalStats;
      if (last && pid !== undefined) {
        perWorker.set(pid, { duplicates: last.runtime.duplicates, retried: last.dispatcher.retried });
        if (last.integration) integrationPerWorker.set(pid, countersOf(last.integration));
      }
    }
    const sumIntegration = (field: keyof IntegrationCounters) =>
      [...integrationPerWorker.values()].reduce((n, w) => n + w[field], 0);
    const integration: IntegrationSummary = {
      transport,
      injected,
      published: sumIntegration("published"),
      handedOver: sumIntegration("handedOver"),
      duplicatesSuppressedAtLeast: sumIntegration("duplicatesSuppressed"),
      parkedAtLeast: sumIntegration("parked"),
      releasedAtLeast: sumIntegration("released"),
      parkedAtEnd: journalWide.parkedNow,
      gapsAlerted: journalWide.gapsAlerted,
      deadLetters: journalWide.deadLetters,
    };
    const sum = (field: "duplicates" | "retried") => [...perWorker.values()].reduce((n, w) => n + w[field], 0);
    const auditReport = audit({
      placed,
      views,
      integration: {
        views: integrationViews,
        deadLetters: journalWide.deadLetters,
        parkedAtEnd: journalWide.parkedNow,
      },
      ledgers,
      operator,
      client: {
        requests: api.requests,
        retried: api.retried,
        replays: requests.filter((r) => r.replay).length,
        replayedAnswers: api.replayedAnswers,
        replayMismatches,
      },
      worker: {
        incarnations: supervisors.reduce((n, w) => n + w.incarnations, 0),
        killedByParent: supervisors.reduce((n, w) => n + w.killedByParent, 0),
        killedAtFaultPoint: supervisors.reduce((n, w) => n + w.killedAtFaultPoint, 0),
        inboxDuplicatesAtLeast: sum("duplicates"),
        sameKeyRetriesAtLeast: sum("retried"),
      },
    });
    progress.phase = "done";
    report();
    return {
      report: auditReport,
      workers: workerCount,
      pgRestarts: progress.pgRestarts,
      backend: options.db ? "postgres" : "sqlite",
      integration,
      durationMs: Date.now() - started,
      workerLog,
      timedOut,
      throughput: measureThroughput(placed, views),
      arrival: { arrivalMs, inFlight, maxOpen },
      cancels: { rate: cancelRate, answers: cancelAnswers },
      partitions: partitioned ? settlePartitionRecords(partitionRecords, partitioned) : [],
      workerFigures: figures,
    };
  } finally {
    for (const close of closers.reverse()) await close().catch(() => {});
  }
}

function stringEnv(env: NodeJS.ProcessEnv): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) if (v !== undefined && k !== "ONCELY_FAULT") out[k] = v;
  return out;
}

function freshSqlite(path: string): string {
  for (const suffix of ["", "-wal", "-shm"]) rmSync(`${path}${suffix}`, { force: true });
  return `sqlite:${path}`;
}

async function freshPostgres(url: string, schema: string, applicationName: string): Promise<string> {
  if (!/^[a-z_][a-z0-9_]*$/i.test(schema)) throw new Error(`invalid schema name "${schema}"`);
  const parsed = new URL(url);
  parsed.searchParams.delete("schema");
  const client = new pg.Client({ connectionString: parsed.toString(), connectionTimeoutMillis: 5000 });
  await client.connect();
  try {
    await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  } finally {
    await client.end();
  }
  parsed.searchParams.set("schema", schema);
  parsed.searchParams.set("application_name", applicationName);
  return parsed.toString();
}

interface OrderRequest {
  index: number;
  key: string;
  body: { email: string; currency: string; lines: { sku: string; quantity: number; unitPrice: number }[] };
  replay: boolean;
}

const SKUS = ["book", "pen", "lamp", "mug", "chair", "desk", "plant", "poster"];

/** One order, all from the seeded random. About 10% have a total ending in 13: the provider declines those. */
function orderRequest(i: number, seed: number, random: Random, replayRate: number): OrderRequest {
  const pick = <T>(items: readonly T[]) => items[Math.floor(random.next() * items.length)] as T;
  const declined = random.next() < 0.1;
  const replay = random.next() < replayRate;
  const lineCount = 1 + Math.floor(random.next() * 3);
  let lines = Array.from({ length: lineCount }, () => ({
    sku: pick(SKUS),
    quantity: 1 + Math.floor(random.next() * 3),
    unitPrice: 100 * (1 + Math.floor(random.next() * 90)),
  }));
  if (declined) lines = [{ sku: pick(SKUS), quantity: 1, unitPrice: 100 * (1 + Math.floor(random.next() * 50)) + 13 }];
  return {
    index: i,
    key: `demo-${seed}-${String(i + 1).padStart(5, "0")}`,
    body: { email: `customer${i + 1}@example.com`, currency: "EUR", lines },
    replay,
  };
}

async function forEachLimit<T>(items: readonly T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await fn(items[next++] as T);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

async function getJson<T>(url: string, headers: Record<string, string> = {}): Promise<T> {
  const response = await fetch(url, { headers, signal: AbortSignal.timeout(10_000) });
  if (!response.ok) throw new Error(`GET ${url} answered ${response.status}`);
  return (await response.json()) as T;
}

interface IntegrationCounters {
  published: number;
  handedOver: number;
  duplicatesSuppressed: number;
  parked: number;
  released: number;
}

const countersOf = (s: IntegrationCounters): IntegrationCounters => ({
  published: s.published,
  handedOver: s.handedOver,
  duplicatesSuppressed: s.duplicatesSuppressed,
  parked: s.parked,
  released: s.released,
});

interface StatsAnswer {
  pid: number;
  integration: (IntegrationCounters & { gapsAlerted: number; deadLetters: number; parkedNow: number }) | null;
  runtime: { duplicates: number };
  dispatcher: { retried: number } | null;
  reconciliation: number;
  orders: { total: number; byStatus: Record<string, number> };
}

/**
 * The demo's HTTP client. Connection errors, timeouts and 5xx mean "the worker is down or busy":
 * it retries with the same Idempotency-Key, which is exactly what the key is for.
 */
class ShopClient {
  requests = 0;
  retried = 0;
  replayedAnswers = 0;
  private turn = 0;
  /** Several workers: each attempt goes to the next one, so a dead worker only costs a retry. */
  constructor(
    private readonly urls: string[],
    private readonly adminToken: string,
  ) {}

  private get admin(): Record<string, string> {
    return { authorization: `Bearer ${this.adminToken}` };
  }

  private get url(): string {
    return this.urls[this.turn++ % this.urls.length] as string;
  }

  async placeOrder(key: string, body: OrderRequest["body"]): Promise<{ orderId: string; replayed: boolean }> {
    return this.retrying(async () => {
      const response = await fetch(`${this.url}/orders`, {
        method: "POST",
        headers: { "content-type": "application/json", "idempotency-key": key },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(5000),
      });
      const answer = (await response.json().catch(() => ({}))) as { orderId?: string; error?: string };
      if (response.status >= 500) return undefined;
      if ((response.status !== 201 && response.status !== 200) || !answer.orderId) {
        throw new Error(`POST /orders (key ${key}) answered ${response.status}: ${answer.error ?? "no orderId"}`);
      }
      const replayed = response.headers.get("idempotent-replayed") === "true";
      if (replayed) this.replayedAnswers++;
      return { orderId: answer.orderId, replayed };
    });
  }

  /** Cancels with `key`, retried until the shop decides: 202 (cancelled), 200 (already was) or 409 (shipped). */
  async cancelOrder(orderId: string, key: string): Promise<number> {
    return this.retrying(async () => {
      const response = await fetch(`${this.url}/orders/${orderId}/cancel`, {
        method: "POST",
        headers: { "content-type": "application/json", "idempotency-key": key },
        body: JSON.stringify({ reason: "the demo's customer changed their mind" }),
        signal: AbortSignal.timeout(5000),
      });
      const answer = (await response.json().catch(() => ({}))) as { error?: string };
      if (response.status >= 500) return undefined;
      if (![200, 202, 409].includes(response.status)) {
        throw new Error(`POST /orders/${orderId}/cancel answered ${response.status}: ${answer.error ?? ""}`);
      }
      return response.status;
    });
  }

  async order(orderId: string): Promise<OrderView | null> {
    return this.retrying(async () => {
      const response = await fetch(`${this.url}/orders/${orderId}`, { signal: AbortSignal.timeout(5000) });
      if (response.status === 404) return null;
      if (response.status >= 500) return undefined;
      if (!response.ok) throw new Error(`GET /orders/${orderId} answered ${response.status}`);
      return (await response.json()) as OrderView;
    });
  }

  async orderView(orderId: string): Promise<IntegrationView | null> {
    return this.retrying(async () => {
      const response = await fetch(`${this.url}/order-views/${orderId}`, { signal: AbortSignal.timeout(5000) });
      if (response.status === 404) return null;
      if (response.status >= 500) return undefined;
      if (!response.ok) throw new Error(`GET /order-views/${orderId} answered ${response.status}`);
      return (await response.json()) as IntegrationView;
    });
  }

  async stats(): Promise<StatsAnswer> {
    // A long timeout: an abandoned request goes on computing in the worker, and the next would pile on it.
    const response = await fetch(`${this.url}/admin/stats`, {
      headers: this.admin,
      signal: AbortSignal.timeout(60_000),
    });
    if (!response.ok) throw new Error(`GET /admin/stats answered ${response.status}`);
    return (await response.json()) as StatsAnswer;
  }

  async reconciliation(): Promise<{ key: string; kind: string; input?: unknown }[]> {
    const answer = await getJson<{ items: { key: string; kind: string; input?: unknown }[] }>(
      `${this.url}/admin/reconciliation`,
      this.admin,
    );
    return answer.items;
  }

  async settle(key: string, settlement: unknown): Promise<boolean> {
    const response = await fetch(`${this.url}/admin/reconciliation/${encodeURIComponent(key)}/settle`, {
      method: "POST",
      headers: { "content-type": "application/json", ...this.admin },
      body: JSON.stringify(settlement),
      signal: AbortSignal.timeout(5000),
    });
    return response.ok;
  }

  /** `attempt` returns undefined for "try again"; network errors and timeouts also try again. */
  private async retrying<T>(attempt: () => Promise<T | undefined>): Promise<T> {
    for (let n = 0; ; n++) {
      this.requests++;
      try {
        const result = await attempt();
        if (result !== undefined) return result;
      } catch (error) {
        if (!isNetworkError(error)) throw error;
      }
      this.retried++;
      await sleep(Math.min(1000, 50 * 2 ** Math.min(n, 5)));
    }
  }
}

const isNetworkError = (error: unknown) =>
  error instanceof Error &&
  (error.name === "TimeoutError" || error.name === "AbortError" || error.message === "fetch failed");

/**
 * The operator: for each effect in the reconciliation queue, read the provider's own ledger by
 * the effect's key (as a human with the provider's dashboard would) and settle accordingly.
 */
async function settleAsOperator(
  api: ShopClient,
  providers: {
    payment: { url: string };
    email: { url: string };
    warehouse: { url: string };
  },
  log: OperatorSettlement[],
): Promise<void> {
  const items = await api.reconciliation().catch(() => []);
  for (const item of items) {
    let settlement: { outcome: "succeeded"; result: object } | { outcome: "failed"; reason: string };
    let evidence: string;
    if (item.kind === "payment") {
      const ledger = await getJson<Ledgers["payment"]>(`${providers.payment.url}/ledger`);
      const charges = ledger.charges.filter((c) => c.idempotencyKey === item.key);
      const declines = ledger.declines.filter((d) => d.idempotencyKey === item.key);
      const charge = charges[charges.length - 1];
      if (charge) {
        settlement = { outcome: "succeeded", result: { paymentId: charge.paymentId } };
        evidence = `${charges.length} charge(s) under the key, latest ${charge.paymentId}`;
      } else if (declines.length > 0) {
        settlement = { outcome: "failed", reason: declines[declines.length - 1]?.reason ?? "declined" };
        evidence = "declined by the provider";
      } else {
        settlement = { outcome: "failed", reason: "no charge under this key at the provider" };
        evidence = "no record at the provider";
      }
    } else if (item.kind === "email") {
      const ledger = await getJson<Ledgers["email"]>(`${providers.email.url}/ledger`);
      const sent = ledger.emails.find((e) => e.idempotencyKey === item.key);
      settlement = sent
        ? { outcome: "succeeded", result: { messageId: sent.messageId } }
        : { outcome: "failed", reason: "the mail provider has no record of this key" };
      evidence = sent ? `sent as ${sent.messageId}` : "no record at the provider";
    } else if (item.kind === EFFECT_KINDS.refund) {
      const ledger = await getJson<Ledgers["payment"]>(`${providers.payment.url}/ledger`);
      const refunds = ledger.refunds.filter((r) => r.idempotencyKey === item.key);
      const refund = refunds[refunds.length - 1];
      settlement = refund
        ? { outcome: "succeeded", result: { refundId: refund.refundId } }
        : { outcome: "failed", reason: "no refund under this key at the provider" };
      evidence = refund
        ? `${refunds.length} refund(s) under the key, latest ${refund.refundId}`
        : "no record at the provider";
    } else if (item.kind === EFFECT_KINDS.picklistCancel) {
      const ledger = await getJson<Ledgers["warehouse"]>(`${providers.warehouse.url}/ledger`);
      const cancelled = ledger.cancellations.find((c) => c.idempotencyKey === item.key);
      settlement = cancelled
        ? { outcome: "succeeded", result: { cancelled: cancelled.picklistIds } }
        : { outcome: "failed", reason: "the warehouse has no cancellation under this key" };
      evidence = cancelled
        ? `cancelled ${cancelled.picklistIds.join(", ") || "no picklist yet"}`
        : "no record at the provider";
    } else if (item.kind === EFFECT_KINDS.shipmentCheck) {
      // What the shipment asked: what became of its picklist (by the picklist's key, in the check's input).
      const ledger = await getJson<Ledgers["warehouse"]>(`${providers.warehouse.url}/ledger`);
      const picklistKey = (item.input as { picklistKey?: unknown } | undefined)?.picklistKey;
      const picklist = ledger.picklists.find((p) => p.idempotencyKey === picklistKey);
      const shipment = picklist && ledger.shipments.find((s) => s.picklistId === picklist.picklistId);
      if (!picklist) {
        settlement = { outcome: "failed", reason: "the warehouse has no picklist under the checked key" };
      } else if (shipment) {
        const adjustments = ledger.shortages
          .filter((s) => s.picklistId === picklist.picklistId)
          .map(({ eventId, adjustmentId, lines }) => ({ eventId, adjustmentId, lines }));
        const { eventId, shipmentId, at } = shipment;
        const result = { status: "shipped", shipment: { eventId, shipmentId, occurredAt: at }, adjustments };
        settlement = { outcome: "succeeded", result };
      } else {
        const cancelled = ledger.cancellations.some((c) => c.orderId === picklist.orderId);
        settlement = { outcome: "succeeded", result: { status: cancelled ? "cancelled" : "accepted" } };
      }
      evidence = !picklist
        ? "no record at the provider"
        : shipment
          ? `shipped as ${shipment.shipmentId}`
          : "not shipped";
    } else {
      const ledger = await getJson<Ledgers["warehouse"]>(`${providers.warehouse.url}/ledger`);
      const picklist = ledger.picklists.find((p) => p.idempotencyKey === item.key);
      settlement = picklist
        ? { outcome: "succeeded", result: { picklistId: picklist.picklistId } }
        : { outcome: "failed", reason: "the warehouse has no record of this key" };
      evidence = picklist ? `accepted as ${picklist.picklistId}` : "no record at the provider";
    }
    const ok = await api.settle(item.key, { ...settlement, by: "demo-operator" }).catch(() => false);
    if (ok) log.push({ key: item.key, outcome: settlement.outcome, evidence });
  }
}

/**
 * Terminate every PostgreSQL connection named `applicationName` at seeded intervals around
 * `everyMs`, until `done()`. Workers must ride through it: pools reconnect, a transaction cut
 * mid-way rolls back, and whatever was in flight is retried.
 */
async function restartConnections(
  url: string,
  applicationName: string,
  everyMs: number,
  random: Random,
  done: () => boolean,
  onRestart: () => void,
): Promise<void> {
  const admin = new URL(url);
  admin.search = "";
  const client = new pg.Client({ connectionString: admin.toString(), connectionTimeoutMillis: 5000 });
  await client.connect();
  try {
    while (!done()) {
      await sleep(everyMs * (0.5 + random.next()));
      if (done()) break;
      const result = await client.query(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1",
        [applicationName],
      );
      if ((result.rowCount ?? 0) > 0) onRestart();
    }
  } finally {
    await client.end();
  }
}
