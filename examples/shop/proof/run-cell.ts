import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { fileURLToPath } from "node:url";
import type { Journal } from "oncely";
import { openJournal, Runtime } from "oncely";
import { ArmableFaults, type FaultPoint } from "oncely/testing";
import pg from "pg";
import { type AuditReport, audit, type Ledgers } from "../demo/audit.js";
import { freePort } from "../demo/worker-process.js";
import { orderActor } from "../ordering/actor.js";
import type { OrderState } from "../ordering/state.js";
import { startEmailProvider } from "../providers/email/server.js";
import { startPaymentProvider } from "../providers/payment/server.js";
import { startWarehouseProvider } from "../providers/warehouse/server.js";
import { type OrderView, orderView } from "../service/order-view.js";
import { startShop } from "../service/shop.js";
import { type CellOrder, cellOrders, driveOrders } from "./drive.js";
import type { FaultMode } from "./matrix.js";

export interface CellOptions {
  point: FaultPoint;
  mode: FaultMode;
  /** `sqlite:PATH` or `postgres://…?schema=…` (fresh for this cell). */
  databaseUrl: string;
  orders?: number;
  /** Let the point pass this many times before the fault (so some work is already done). */
  after?: number;
  timeoutMs?: number;
}

export interface CellResult {
  point: FaultPoint;
  mode: FaultMode;
  /** The fault really happened at the point. */
  fired: boolean;
  report: AuditReport;
  durationMs: number;
}

/** Where the providers of one cell listen, and the secret the warehouse signs its webhooks with. */
type ProviderUrls = { paymentUrl: string; emailUrl: string; warehouseUrl: string; webhookSecret: string };

const CHILD = fileURLToPath(new URL("./cell-child.ts", import.meta.url));
const EFFECT_TIMEOUT_MS = 500;

/**
 * One cell: real providers over HTTP, the shop on a real journal, one fault at one point, then
 * recovery (the shop carries on, or a new process starts), and the audit against the providers'
 * own ledgers: one charge per paid order, none for a declined one, nothing lost, all terminal.
 */
export async function runCell(options: CellOptions): Promise<CellResult> {
  const started = Date.now();
  const orders = cellOrders(options.orders ?? 3);
  const timeoutMs = options.timeoutMs ?? 45_000;
  const payment = await startPaymentProvider({ declineAmountsEndingWith: "13" });
  const email = await startEmailProvider({});
  const webhookSecret = randomBytes(24).toString("base64url");
  const warehouse = await startWarehouseProvider({
    webhookSecret,
    shipDelayMs: 20,
    webhook: { timeoutMs: 2000, maxAttempts: 60, backoffMs: 50, maxBackoffMs: 500 },
  });
  const providerUrls: ProviderUrls = {
    paymentUrl: payment.url,
    emailUrl: email.url,
    warehouseUrl: warehouse.url,
    webhookSecret,
  };
  try {
    const fired =
      options.mode === "kill"
        ? await killCell(options, orders, providerUrls, (url) => warehouse.setShopUrl(url), timeoutMs)
        : await inProcessCell(options, orders, providerUrls, (url) => warehouse.setShopUrl(url), timeoutMs);
    await warehouse.settled();
    const ledgers: Ledgers = {
      payment: payment.ledger as Ledgers["payment"],
      email: email.ledger as Ledgers["email"],
      warehouse: warehouse.ledger as Ledgers["warehouse"],
    };
    const journal = await openJournal(options.databaseUrl);
    try {
      const report = audit({
        placed: orders.map((o) => ({ key: o.key, orderId: o.orderId })),
        views: await views(journal, orders),
        ledgers,
        operator: [],
        client: { requests: 0, retried: 0, replays: 0, replayedAnswers: 0, replayMismatches: [] },
        worker: {
          incarnations: options.mode === "kill" && fired ? 2 : 1,
          killedByParent: 0,
          killedAtFaultPoint: options.mode === "kill" && fired ? 1 : 0,
          inboxDuplicatesAtLeast: 0,
          sameKeyRetriesAtLeast: 0,
        },
      });
      return { point: options.point, mode: options.mode, fired, report, durationMs: Date.now() - started };
    } finally {
      await journal.close();
    }
  } finally {
    await Promise.allSettled([payment.close(), email.close(), warehouse.close()]);
  }
}

/** throw and pg-terminate: the shop in this process, the fault armed once at the point. */
async function inProcessCell(
  options: CellOptions,
  orders: CellOrder[],
  providerUrls: ProviderUrls,
  setShopUrl: (url: string) => void,
  timeoutMs: number,
): Promise<boolean> {
  const faults = new ArmableFaults();
  let databaseUrl = options.databaseUrl;
  let admin: pg.Client | undefined;
  if (options.mode === "pg-terminate") {
    // The shop's connections carry a name of their own, so the fault kills exactly those.
    const appName = `oncely-matrix-${process.pid}-${Date.now().toString(36)}`;
    const url = new URL(options.databaseUrl);
    url.searchParams.set("application_name", appName);
    databaseUrl = url.toString();
    const adminUrl = new URL(options.databaseUrl);
    adminUrl.search = "";
    admin = new pg.Client({ connectionString: adminUrl.toString() });
    await admin.connect();
    const client = admin;
    faults.arm(options.point, {
      after: options.after ?? 1,
      action: async () => {
        await client.query("select pg_terminate_backend(pid) from pg_stat_activity where application_name = $1", [
          appName,
        ]);
      },
    });
  } else {
    faults.arm(options.point, { after: options.after ?? 1 });
  }
  const shop = await startShop({
    port: 0,
    databaseUrl,
    ...providerUrls,
    effectTimeoutMs: EFFECT_TIMEOUT_MS,
    dispatcherOwner: `matrix-${options.point}`,
    faults,
    // The relay's points are on the outbox path: with events published by their commits they never fire.
    publishAtCommit: !options.point.startsWith("relay."),
  });
  try {
    setShopUrl(shop.url);
    await driveOrders(shop.runtime, orders, timeoutMs);
    return faults.fired.includes(options.point);
  } finally {
    await shop.close();
    await admin?.end();
  }
}

/** kill: a child worker dies by SIGKILL at the point; a second one, unarmed, finishes the work. */
async function killCell(
  options: CellOptions,
  orders: CellOrder[],
  providerUrls: ProviderUrls,
  setShopUrl: (url: string) => void,
  timeoutMs: number,
): Promise<boolean> {
  const port = await freePort();
  setShopUrl(`http://127.0.0.1:${port}`);
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? "",
    PORT: String(port),
    DATABASE_URL: options.databaseUrl,
    PAYMENT_URL: providerUrls.paymentUrl,
    EMAIL_URL: providerUrls.emailUrl,
    WAREHOUSE_URL: providerUrls.warehouseUrl,
    WAREHOUSE_WEBHOOK_SECRET: providerUrls.webhookSecret,
    EFFECT_TIMEOUT_MS: String(EFFECT_TIMEOUT_MS),
    ORDERS: String(orders.length),
    CELL_TIMEOUT_MS: String(timeoutMs),
    // The relay's points are on the outbox path: with events published by their commits they never fire.
    PUBLISH_AT_COMMIT: options.point.startsWith("relay.") ? "0" : "1",
  };
  const first = await runChild({ ...env, ONCELY_FAULT: `${options.point}:kill:${options.after ?? 1}` }, timeoutMs);
  const fired = first.signal === "SIGKILL";
  if (!fired && first.code !== 0) throw new Error(`matrix worker failed (code ${first.code}): ${first.stderr}`);
  if (fired) {
    const second = await runChild(env, timeoutMs);
    if (second.code !== 0) throw new Error(`restarted matrix worker failed (code ${second.code}): ${second.stderr}`);
  }
  return fired;
}

function runChild(
  env: Record<string, string>,
  timeoutMs: number,
): Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ["--import", "tsx", CHILD], { env, stdio: ["ignore", "pipe", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (chunk) => {
      stderr = (stderr + chunk.toString()).slice(-4000);
    });
    // Bounded: a worker that hangs is killed and reported, never waited on forever.
    const timer = setTimeout(() => child.kill("SIGTERM"), timeoutMs + 15_000);
    child.once("exit", (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stderr });
    });
  });
}

async function views(journal: Journal, orders: CellOrder[]): Promise<Record<string, OrderView | null>> {
  const runtime = new Runtime({ journal, actors: [orderActor] });
  const out: Record<string, OrderView | null> = {};
  for (const order of orders) {
    const address = `order/${order.orderId}`;
    const events = await journal.readStream(address);
    out[order.orderId] =
      events.length === 0 ? null : orderView((await runtime.state<OrderState>(address)).state, events);
  }
  runtime.close();
  return out;
}
