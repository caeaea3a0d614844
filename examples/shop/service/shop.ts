import { randomBytes as cryptoRandomBytes } from "node:crypto";
import { join } from "node:path";
import type { FastifyInstance } from "fastify";
import type { EffectPolicy, Host, Journal, Ownership, Runtime, Transport } from "oncely";
import {
  type Clock,
  createHost,
  type HostPeers,
  type IdGenerator,
  type Logger,
  observeJournal,
  openJournal,
  randomIds,
  silentLogger,
  systemClock,
} from "oncely";
import type { InProcessFaultKnobs } from "oncely/testing";
import { type Faults, noFaults } from "oncely/testing";
import { collectDefaultMetrics, Registry } from "prom-client";
import type { ShopEnv } from "../config.js";
import {
  createShopTransport,
  type ShopContexts,
  type ShopTransportKind,
  shopActors,
  shopContexts,
  shopIntegration,
} from "../contexts.js";
import { createEmailHandler } from "../effects/email-handler.js";
import { createPaymentHandler } from "../effects/payment-handler.js";
import { createPicklistCancelHandler } from "../effects/picklist-cancel-handler.js";
import { createPicklistHandler } from "../effects/picklist-handler.js";
import { createRefundHandler } from "../effects/refund-handler.js";
import { createShipmentCheckHandler } from "../effects/shipment-check-handler.js";
import type { ShopKeys } from "../integration/keys.js";
import type { NatsPasswords } from "../integration/nats-users.js";
import { startEmailProvider } from "../providers/email/server.js";
import { startPaymentProvider } from "../providers/payment/server.js";
import { MIN_WEBHOOK_SECRET_LENGTH } from "../providers/shared/webhook-signature.js";
import { startWarehouseProvider } from "../providers/warehouse/server.js";
import { resolveAdminToken } from "./admin-auth.js";
import { buildApp } from "./app.js";
import type { ShopContext } from "./context.js";
import { OrderStatuses } from "./order-statuses.js";
import type { OrderLimits } from "./validation.js";

/**
 * Provider calls the shop's dispatcher runs at once. Every effect here is an HTTP call that spends
 * most of its time waiting, so the library's default (8, polite to a provider nobody measured)
 * bounded the whole shop: `npm start -- --faults none --orders 2000`, three pairs alternating, 81.8,
 * 86.2 and 83.8 orders/s at 8 (p50 831-913 ms) against 103.4, 99.3 and 95.5 at 32 (p50 567-598 ms);
 * over 1,500 orders 89.8 and 93.3 at 16, 101.7 and 102.7 at 64: past 32 the worker's CPU bounds it.
 */
export const SHOP_EFFECT_CONCURRENCY = 32;

export interface ShopOptions {
  /**
   * What this worker owns when several share the journal: HTTP commands and the dispatcher's
   * deliveries go through a `CommandRouter`, and the dispatcher claims only owned slices. Unset: all.
   */
  ownership?: Ownership | undefined;
  /** Default 3000; 0 picks a free port. */
  port?: number | undefined;
  /** Default 127.0.0.1 (loopback). */
  host?: string | undefined;
  /** See `openJournal`: unset → SQLite `{dataDir}/oncely.db`, `postgres://…`, `sqlite:PATH`, `memory:`. */
  databaseUrl?: string | undefined;
  /** Default ./data. */
  dataDir?: string | undefined;
  /** Provider URLs; each one unset starts that fake provider in this process. */
  paymentUrl?: string | undefined;
  emailUrl?: string | undefined;
  warehouseUrl?: string | undefined;
  /** The base URL the warehouse calls back; default the URL this shop listens on. */
  shopUrl?: string | undefined;
  /** false when the payment provider charges again on every request (default true). */
  paymentDedups?: boolean | undefined;
  /** Per provider call (default 5000); lease, backoffs and lookup pacing follow from it. */
  effectTimeoutMs?: number | undefined;
  /** Provider calls the dispatcher runs at once (default `SHOP_EFFECT_CONCURRENCY`). */
  effectConcurrency?: number | undefined;
  /**
   * This worker's name (unique per process; default `shop-PID-TIME`): the host's name, so its
   * dispatcher leases rows as `NAME/dispatcher` and its relay as `NAME/relay`; its worker id with `sliceLeases`.
   */
  dispatcherOwner?: string | undefined;
  /** Run only the actors of the slices this worker leases (several workers on PostgreSQL); see `SliceLeaseManager`. */
  sliceLeases?: boolean | undefined;
  /** With `sliceLeases`: serve this worker's slices to the other workers and send theirs straight to them (see `HostPeers`). */
  peers?: HostPeers | undefined;
  faults?: Faults | undefined;
  /**
   * `false`: integration events go through outbox rows and the relay even on the journal transport
   * (the crash-point matrix's relay cells); default: each commit publishes its own (see `createHost`).
   */
  publishAtCommit?: boolean | undefined;
  logger?: Logger | undefined;
  clock?: Clock | undefined;
  ids?: IdGenerator | undefined;
  bodyLimit?: number | undefined;
  /** Transport of integration events: `in-process` (default) or `nats` (JetStream stream `SHOP`). */
  transport?: ShopTransportKind | undefined;
  /** NATS server URL (default nats://127.0.0.1:4222); with `transport: "nats"`. */
  natsUrl?: string | undefined;
  /** In-process transport only: duplicated, delayed and reordered delivery of integration events. */
  integrationFaults?: InProcessFaultKnobs | undefined;
  /** A gap in a producer's sequence open longer than this is alerted (default 30 s). */
  gapTimeoutMs?: number | undefined;
  /** An order not shipped this long after its picklist's acceptance needs attention (default 15 min). */
  shipmentDeadlineMs?: number | undefined;
  /** A shipment whose webhook has not come this long after the picklist's acceptance asks the warehouse (default 1 min). */
  shipmentCheckMs?: number | undefined;
  /** Bearer token of `/admin/*`. Unset: generated (see `Shop.adminToken`), allowed only on a loopback host. */
  adminToken?: string | undefined;
  /**
   * Secret shared with the warehouse, which signs its webhook calls with it. Required with
   * `warehouseUrl`; unset with the in-process warehouse: generated and handed to both.
   */
  webhookSecret?: string | undefined;
  /** How far a webhook's signed timestamp may lie from the clock (default 5 minutes). */
  webhookToleranceMs?: number | undefined;
  /** Bounds of an order at the API (largest total in minor units, most lines). */
  orderLimits?: OrderLimits | undefined;
  /** Source of generated tokens and secrets (default node:crypto's). */
  randomBytes?: ((size: number) => Buffer) | undefined;
  /** Each context's signing keys (default: the development keys, see integration/keys.ts). */
  signingKeys?: ShopKeys | undefined;
  /** NATS: each context connects as its own user with these passwords (default: one anonymous connection). */
  natsPasswords?: NatsPasswords | undefined;
}

export interface Shop {
  url: string;
  /** Everything that runs the shop's actors and integration: runtime, dispatcher, relay, consumers, retention. */
  host: Host;
  /** The host's runtime. */
  runtime: Runtime;
  /** The host's journal (observed: waits on the host see every commit through it). */
  journal: Journal;
  /** The bounded contexts' relay and consumers (the host's, by context). */
  contexts: ShopContexts;
  transport: Transport;
  app: FastifyInstance;
  /** URLs of the providers in use (started here or given). */
  providerUrls: { payment: string; email: string; warehouse: string };
  /** The bearer token `/admin/*` answers to; `adminTokenGenerated` when nobody chose it (print it). */
  adminToken: string;
  adminTokenGenerated: boolean;
  close(): Promise<void>;
}

export function shopOptionsFromEnv(env: ShopEnv): ShopOptions {
  return {
    port: env.PORT,
    host: env.HOST,
    databaseUrl: env.DATABASE_URL,
    paymentUrl: env.PAYMENT_URL,
    emailUrl: env.EMAIL_URL,
    warehouseUrl: env.WAREHOUSE_URL,
    shopUrl: env.SHOP_URL,
    paymentDedups: env.PAYMENT_PROVIDER_DEDUPS,
    effectTimeoutMs: env.EFFECT_TIMEOUT_MS,
    effectConcurrency: env.EFFECT_CONCURRENCY,
    dispatcherOwner: env.DISPATCHER_OWNER,
    sliceLeases: env.SLICE_LEASES,
    peers:
      env.PEER_PORT === undefined
        ? undefined
        : {
            listen: { port: env.PEER_PORT, ...(env.PEER_HOST ? { host: env.PEER_HOST } : {}) },
            ...(env.PEER_ADVERTISE ? { advertise: env.PEER_ADVERTISE } : {}),
            // loadShopEnv refuses PEER_PORT without PEER_SECRET.
            secret: env.PEER_SECRET ?? "",
          },
    transport: env.TRANSPORT ?? (env.NATS_URL ? "nats" : "in-process"),
    natsUrl: env.NATS_URL,
    integrationFaults: {
      duplicateRate: env.INTEGRATION_DUPLICATE_RATE,
      maxDelayMs: env.INTEGRATION_MAX_DELAY_MS,
      reorderWindow: env.INTEGRATION_REORDER_WINDOW,
    },
    gapTimeoutMs: env.GAP_TIMEOUT_MS,
    shipmentDeadlineMs: env.SHIPMENT_DEADLINE_MS,
    shipmentCheckMs: env.SHIPMENT_CHECK_MS,
    adminToken: env.ONCELY_ADMIN_TOKEN,
    webhookSecret: env.WAREHOUSE_WEBHOOK_SECRET,
    webhookToleranceMs: env.WEBHOOK_TOLERANCE_S * 1000,
    orderLimits: { maxOrderTotal: env.MAX_ORDER_TOTAL, maxLines: env.MAX_ORDER_LINES },
    signingKeys: env.SHOP_SIGNING_KEYS,
    natsPasswords: env.NATS_PASSWORDS,
  };
}

/**
 * A warehouse elsewhere must have been given the same secret (without one, every webhook would be
 * refused), and a short one could be guessed.
 */
export class WebhookSecretRequiredError extends Error {
  constructor() {
    super(
      "WAREHOUSE_WEBHOOK_SECRET (webhookSecret) is required with WAREHOUSE_URL: give the shop the secret the " +
        "warehouse signs its webhooks with (at least 16 characters)",
    );
    this.name = "WebhookSecretRequiredError";
  }
}

/**
 * The effect policy of every handler, from one number. The lease outlives a call (a second
 * dispatcher never starts a key the first still waits on) and is short enough that a killed
 * worker's rows are taken over within seconds. An Unknown effect whose lookup finds nothing
 * `2 × timeout` after its last run may run again with the same key: by then the call is over and
 * the provider records its work before it answers, so "not found" means it never arrived.
 */
export function shopEffectPolicy(timeoutMs: number): Partial<EffectPolicy> {
  return {
    timeoutMs,
    leaseMs: timeoutMs * 3,
    maxAttempts: 8,
    backoff: { initialMs: Math.max(50, Math.round(timeoutMs / 10)), maxMs: timeoutMs * 2, multiplier: 2, jitter: 0.2 },
    lookupAttempts: 8,
    lookupBackoff: {
      initialMs: Math.max(100, Math.round(timeoutMs / 5)),
      maxMs: timeoutMs * 2,
      multiplier: 2,
      jitter: 0.2,
    },
    rerunAfterNotFoundMs: timeoutMs * 2,
  };
}

/**
 * Starts the whole shop in this process: the journal, the fake providers it was not given URLs
 * for, the transport, one host (`createHost`) running every context's actors (order, payment,
 * shipment, fulfillment), the provider handlers, the relay and the contexts' consumers
 * (`shopIntegration`), and the retention jobs, and the HTTP server. `close()` stops them in
 * reverse order: the HTTP server, the host, the transport, the providers, the journal.
 */
export async function startShop(options: ShopOptions = {}): Promise<Shop> {
  const logger = options.logger ?? silentLogger;
  const clock = options.clock ?? systemClock;
  const dataDir = options.dataDir ?? "./data";
  const listenHost = options.host ?? "127.0.0.1";
  const randomBytes = options.randomBytes ?? cryptoRandomBytes;
  // Both checked before anything starts: a shop that cannot authenticate its callers never listens.
  const admin = resolveAdminToken(options.adminToken, listenHost, randomBytes);
  if (options.warehouseUrl && options.webhookSecret === undefined) throw new WebhookSecretRequiredError();
  if (options.webhookSecret !== undefined && options.webhookSecret.length < MIN_WEBHOOK_SECRET_LENGTH) {
    throw new WebhookSecretRequiredError();
  }
  const webhookSecret = options.webhookSecret ?? randomBytes(32).toString("base64url");
  const closers: (() => Promise<void>)[] = [];
  const closeAll = async () => {
    for (const close of closers.splice(0).reverse()) {
      await close().catch((error: unknown) => logger.warn({ err: error }, "closing the shop: a part failed to close"));
    }
  };
  try {
    const journal = await openJournal(options.databaseUrl, { dataDir });
    closers.push(() => journal.close());
    // Fake providers keep their ledgers in files whenever the journal outlives the process: a restarted
    // shop re-runs unrecorded effects with the same keys, and a provider that forgot them would act twice.
    const persistent = options.databaseUrl !== "memory:" && options.databaseUrl !== "memory";
    const ledgerPath = (name: string) => (persistent ? join(dataDir, "providers", `${name}.jsonl`) : undefined);

    const payment = options.paymentUrl
      ? undefined
      : await startPaymentProvider({ ledgerPath: ledgerPath("payment"), clock });
    if (payment) closers.push(() => payment.close());
    const email = options.emailUrl ? undefined : await startEmailProvider({ ledgerPath: ledgerPath("email"), clock });
    if (email) closers.push(() => email.close());
    const warehouse = options.warehouseUrl
      ? undefined
      : await startWarehouseProvider({ ledgerPath: ledgerPath("warehouse"), clock, webhookSecret });
    if (warehouse) closers.push(() => warehouse.close());
    const providerUrls = {
      payment: options.paymentUrl ?? payment?.url ?? "",
      email: options.emailUrl ?? email?.url ?? "",
      warehouse: options.warehouseUrl ?? warehouse?.url ?? "",
    };

    const faults = options.faults ?? noFaults;
    const ids = options.ids ?? randomIds;
    // One registry for everything this shop runs, served at GET /metrics (never prom-client's global one).
    const registry = new Registry();
    collectDefaultMetrics({ register: registry });
    const stopJournalMetrics = observeJournal({ journal, registry, clock, logger });
    closers.push(async () => stopJournalMetrics());
    const transport = await createShopTransport({
      kind: options.transport ?? "in-process",
      journal,
      natsUrl: options.natsUrl,
      natsPasswords: options.natsPasswords,
      sliceCount: journal.sliceCount,
      registry,
      faults: options.integrationFaults,
      clock,
      logger,
    });
    closers.push(() => transport.close());
    const name = options.dispatcherOwner ?? `shop-${process.pid}-${clock.now().toString(36)}`;
    const policy = shopEffectPolicy(options.effectTimeoutMs ?? 5000);
    const integration = shopIntegration({
      journal,
      // As the effect leases: a killed worker's claimed events are relayed again within seconds.
      relayLeaseMs: Math.max(3_000, (options.effectTimeoutMs ?? 5000) * 3),
      gapTimeoutMs: options.gapTimeoutMs,
      keys: options.signingKeys,
    });
    const host = createHost({
      name,
      journal,
      actors: shopActors({ shipmentDeadlineMs: options.shipmentDeadlineMs, shipmentCheckMs: options.shipmentCheckMs }),
      handlers: [
        createPaymentHandler({ baseUrl: providerUrls.payment, providerDedups: options.paymentDedups ?? true, policy }),
        // The same provider, the same dedup mode: a provider that charges on every request refunds on every one too.
        createRefundHandler({ baseUrl: providerUrls.payment, providerDedups: options.paymentDedups ?? true, policy }),
        createEmailHandler({ baseUrl: providerUrls.email, policy }),
        createPicklistHandler({ baseUrl: providerUrls.warehouse, policy }),
        createPicklistCancelHandler({ baseUrl: providerUrls.warehouse, policy }),
        createShipmentCheckHandler({ baseUrl: providerUrls.warehouse, policy }),
      ],
      dispatcher: {
        // Durable timers (retry backoffs) are only noticed by polling; keep it short for a lively shop.
        pollIntervalMs: 200,
        concurrency: options.effectConcurrency ?? SHOP_EFFECT_CONCURRENCY,
      },
      transport,
      ...integration,
      relay: { ...integration.relay, ...(options.publishAtCommit === false ? { atCommit: false } : {}) },
      // Leases when asked for (this worker's share of the slices, taken at start); else an ownership
      // given by the caller (tests split the slices by hand); else every actor.
      ...(options.sliceLeases
        ? { ownership: { leases: { workerId: name } }, ...(options.peers ? { peers: options.peers } : {}) }
        : options.ownership
          ? { ownership: options.ownership }
          : {}),
      // The dedup records and the published log are kept for the default redelivery window (7 days), pruned hourly;
      // a published entry also stays until every consumer has read it.
      retention: true,
      registry,
      clock,
      ids,
      faults,
      logger,
    });
    // Stopped before the transport closes and after the HTTP server (pushed later, closed first).
    closers.push(() => host.stop());
    const contexts = shopContexts(host, { registry, clock, transport });

    const ctx: ShopContext = {
      runtime: host.runtime,
      router: host.router,
      journal: host.journal,
      reconciliation: host.reconciliation,
      dispatcher: host.dispatcher,
      contexts,
      ids,
      logger,
      clock,
      startedAt: clock.now(),
      registry,
      orderStatuses: new OrderStatuses(host.journal, host.runtime),
    };
    const app = buildApp(ctx, {
      bodyLimit: options.bodyLimit,
      adminToken: admin.token,
      webhookSecret,
      webhookToleranceMs: options.webhookToleranceMs,
      orderLimits: options.orderLimits,
    });
    await app.listen({ host: listenHost, port: options.port ?? 3000 });
    closers.push(() => app.close());
    const address = app.server.address();
    if (address === null || typeof address === "string") throw new Error("shop: no TCP address");
    const hostname = address.family === "IPv6" ? `[${address.address}]` : address.address;
    const url = `http://${hostname}:${address.port}`;
    warehouse?.setShopUrl(options.shopUrl ?? url);

    // With leases, this worker's share of the slices first; then the dispatcher, the relay, the
    // consumers, the timeline's gap checks and the retention jobs.
    await host.start();
    logger.info({ url, journal: journal.backend, transport: transport.name, providers: providerUrls }, "shop started");
    return {
      url,
      host,
      runtime: host.runtime,
      journal: host.journal,
      contexts,
      transport,
      app,
      providerUrls,
      adminToken: admin.token,
      adminTokenGenerated: admin.generated,
      close: closeAll,
    };
  } catch (error) {
    await closeAll();
    throw error;
  }
}
