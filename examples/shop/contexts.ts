import type { AnyActor, Consumer, Host, HostConsumer, HostOptions, Journal, Relay, Transport } from "oncely";
import {
  type Clock,
  DeadLetters,
  type Envelope,
  GAP_ALERTS,
  type GapAlert,
  type GapDecision,
  type GapInfo,
  type IdGenerator,
  InProcessTransport,
  JournalTransport,
  type Logger,
  type MessagingMetrics,
  messagingMetrics,
  type Random,
  silentLogger,
  systemClock,
  systemRandom,
} from "oncely";
import { DEFAULT_SLICE_COUNT, decodeEnvelope, envelopeFromOutbox, sliceOf } from "oncely/advanced";
import { connectNats, natsTransport } from "oncely/nats";
import { type Faults, type InProcessFaultKnobs, noFaults } from "oncely/testing";
import type { Registry } from "prom-client";
import { FULFILLMENT_CONSUMES, fulfillment } from "./fulfillment/process.js";
import { SHOP_STREAM, SHOP_SUBJECT_PREFIX, SHOP_SUBJECTS } from "./integration/events.js";
import { devShopKeys, type ShopKeys, shopSigner, shopVerifier } from "./integration/keys.js";
import { type NatsPasswords, transportPerUser } from "./integration/nats-users.js";
import { orderActor } from "./ordering/actor.js";
import { ORDERING_CONSUMES, orderingRoute } from "./ordering/integration.js";
import { DEFAULT_SHIPMENT_DEADLINE_MS, withShipmentDeadline } from "./ordering/shipment-deadline.js";
import { PAYMENT_CONSUMES, paymentActor, paymentRoute } from "./payment/actor.js";
import { shipmentActor } from "./shipping/actor.js";
import { DEFAULT_SHIPMENT_CHECK_MS, withShipmentCheck } from "./shipping/shipment-check.js";
import { orderFacts, orderTimeline } from "./views/order-views.js";

/**
 * The shop's wiring: four bounded contexts that talk only through integration events.
 *
 * ```
 *  order/{id} ──OrderPlaced──▶ payment/{id} ──PaymentProcessed/Failed/NeedsAttention──▶ order/{id}
 *      ▲                                            │                                    views
 *      │                              fulfillment/{id} (OrderPlaced + PaymentProcessed)
 *      │                                            │ StartShipping (outbox message)
 *      └──────PicklistAccepted, OrderShipped─── shipment/{id} ◀── warehouse webhook
 * ```
 *
 * One host runs every context (`createHost({ actors: shopActors(), transport, ...shopIntegration(...) })`):
 * its relay publishes the outbox's event rows to the transport on `shop.<source>.<type>`, and
 * hands the events of this process's commits to its consumers at commit (the durable copy is
 * settled from memory, see `Relay.handOverTo`); one durable consumer per context subscribes to
 * one wildcard subject (NATS 2.9 allows one filter per durable) and filters by type.
 */

export interface ShopActorsOptions {
  /** How long after `PicklistAccepted` an order waits for `OrderShipped` before it needs attention. */
  shipmentDeadlineMs?: number | undefined;
  /** How long after `PicklistAccepted` a shipment with no webhook yet asks the warehouse (then twice as long, …). */
  shipmentCheckMs?: number | undefined;
}

/**
 * The shop's actors: the order with its shipment deadline (see ordering/shipment-deadline.ts), the
 * shipment with its check of an overdue webhook (see shipping/shipment-check.ts).
 */
export function shopActors(options: ShopActorsOptions = {}): AnyActor[] {
  const order = withShipmentDeadline(orderActor, options.shipmentDeadlineMs ?? DEFAULT_SHIPMENT_DEADLINE_MS);
  const shipment = withShipmentCheck(shipmentActor, { afterMs: options.shipmentCheckMs ?? DEFAULT_SHIPMENT_CHECK_MS });
  return [order, paymentActor, shipment, fulfillment.actor];
}

export const SHOP_ACTORS: AnyActor[] = shopActors();

/** Durable consumer names (also the names their inboxes, checkpoints and dead letters are kept under). */
export const CONSUMER_NAMES = {
  ordering: "ordering",
  payment: "payment",
  fulfillment: "fulfillment",
  views: "order-views",
  timeline: "order-timeline",
} as const;

/** The producer actor type of each source: where a missing event can be looked up. */
const PRODUCER_STREAM: Record<string, string> = { ordering: "order", payment: "payment", shipping: "shipment" };

export interface ShopIntegrationOptions {
  /** Where a timeline gap's missing events are looked up (see `supplyFromProducer`). */
  journal: Journal;
  /**
   * How long a relay holds the rows it claimed (default 30 s). A relay that dies keeps them that
   * long, so a shop that restarts workers quickly wants it short; a publish outliving it is
   * published twice, which the broker and the inboxes absorb.
   */
  relayLeaseMs?: number | undefined;
  /** A gap in a producer stream open longer than this is alerted (timeline consumer). Default 30 s. */
  gapTimeoutMs?: number | undefined;
  /** How often the timeline's gaps are checked. Default a quarter of the timeout. */
  gapCheckMs?: number | undefined;
  /** Deliveries before a failing message is dead-lettered. Default 5. */
  maxDeliveries?: number | undefined;
  /**
   * Each context's signing keys: the relay signs with them and every consumer verifies against
   * them (what does not verify is dead-lettered, never handled). Default: the development keys.
   */
  keys?: ShopKeys | undefined;
}

/** What `createHost` takes to run the shop's integration: the relay's tuning and one consumer per context. */
export interface ShopIntegration {
  relay: Exclude<HostOptions["relay"], false | undefined>;
  consumers: HostConsumer[];
}

/**
 * The relay and the consumers of the shop's contexts, as a host runs them (`createHost({ ...,
 * transport, ...shopIntegration(...) })`): the relay signs every event and publishes it on
 * `shop.<source>.<type>`; one durable consumer per context subscribes to one wildcard subject
 * (NATS 2.9 allows one filter per durable) and its `types` drop the rest. The host hands the
 * events of its own commits to these consumers at commit (see `Relay.handOverTo`): no claim, no
 * log read between two contexts of one process.
 */
export function shopIntegration(options: ShopIntegrationOptions): ShopIntegration {
  const gapTimeoutMs = options.gapTimeoutMs ?? 30_000;
  const keys = options.keys ?? devShopKeys();
  const verifier = shopVerifier(keys);
  const common = { verifier, maxDeliveries: options.maxDeliveries ?? 5 };
  const { journal } = options;
  return {
    relay: {
      signer: shopSigner(keys),
      subjectPrefix: SHOP_SUBJECT_PREFIX,
      leaseMs: options.relayLeaseMs ?? 30_000,
      pollMs: 200,
    },
    consumers: [
      {
        ...common,
        name: CONSUMER_NAMES.ordering,
        subjects: SHOP_SUBJECTS,
        handler: orderingRoute,
        types: ORDERING_CONSUMES,
      },
      {
        ...common,
        name: CONSUMER_NAMES.payment,
        subjects: [`${SHOP_SUBJECT_PREFIX}.ordering.>`],
        handler: paymentRoute,
        types: PAYMENT_CONSUMES,
      },
      {
        ...common,
        name: CONSUMER_NAMES.fulfillment,
        subjects: SHOP_SUBJECTS,
        handler: fulfillment.route,
        types: FULFILLMENT_CONSUMES,
      },
      { ...common, name: CONSUMER_NAMES.views, subjects: SHOP_SUBJECTS, handler: orderFacts },
      {
        ...common,
        name: CONSUMER_NAMES.timeline,
        subjects: SHOP_SUBJECTS,
        handler: orderTimeline,
        mode: "sequenced",
        gapTimeoutMs,
        gapCheckEveryMs: options.gapCheckMs ?? Math.max(100, Math.floor(gapTimeoutMs / 4)),
        reconcile: (gap) => supplyFromProducer(journal, gap),
      },
    ],
  };
}

export interface IntegrationStats {
  published: number;
  /** Events the relay handed to this process's consumers at commit (see `Relay.handOverTo`). */
  handedOver: number;
  /** Deliveries every consumer's inbox (or actor inbox) recognised as already handled. */
  duplicatesSuppressed: number;
  parked: number;
  released: number;
  /** Messages parked right now (journal-wide). */
  parkedNow: number;
  /** Gap alerts ever raised (journal-wide). */
  gapsAlerted: number;
  /** Dead letters stored (journal-wide, any status). */
  deadLetters: number;
  /** Backwards fact transitions ignored by the order view. */
  backwardsIgnored: number;
  byConsumer: Record<string, Consumer["stats"]>;
}

type ShopConsumers = {
  ordering: Consumer;
  payment: Consumer;
  fulfillment: Consumer;
  views: Consumer;
  timeline: Consumer;
};

/** The shop's integration as a host runs it, by context: its relay, its consumers, their dead letters and counters. */
export interface ShopContexts {
  relay: Relay;
  consumers: ShopConsumers;
  /** The fulfillment process manager's consumer route (for tests that feed it directly). */
  fulfillmentRoute: typeof fulfillment.route;
  deadLetters: DeadLetters;
  metrics: MessagingMetrics;
  /** Counters of this process, plus what the journal knows across processes (gaps, dead letters, parked). */
  stats(): Promise<IntegrationStats>;
}

/**
 * The shop's contexts in a host built with `shopIntegration`: its relay and consumers by
 * context. `registry` is the host's (its messaging metrics are one set per registry), `clock`
 * the host's (dead letters' replay times), `transport` the host's (an in-process one's dedup counts).
 */
export function shopContexts(
  host: Host,
  options: { registry: Registry; clock?: Clock | undefined; transport?: Transport | undefined },
): ShopContexts {
  const relay = host.relay;
  if (!relay) throw new Error("the shop's host runs no relay: give it a transport");
  const byName = (name: string): Consumer => {
    const consumer = host.consumers.find((c) => c.name === name);
    if (!consumer) throw new Error(`the shop's host has no consumer "${name}": build it with shopIntegration`);
    return consumer;
  };
  const consumers: ShopConsumers = {
    ordering: byName(CONSUMER_NAMES.ordering),
    payment: byName(CONSUMER_NAMES.payment),
    fulfillment: byName(CONSUMER_NAMES.fulfillment),
    views: byName(CONSUMER_NAMES.views),
    timeline: byName(CONSUMER_NAMES.timeline),
  };
  const { journal } = host;
  const list = Object.values(consumers);
  return {
    relay,
    consumers,
    fulfillmentRoute: fulfillment.route,
    deadLetters: new DeadLetters(journal, { consumers: list, clock: options.clock ?? systemClock }),
    metrics: messagingMetrics(options.registry),
    async stats() {
      const sum = (field: keyof Consumer["stats"]) => list.reduce((n, c) => n + c.stats[field], 0);
      const inProcess = options.transport instanceof InProcessTransport ? options.transport.stats.deduplicated : 0;
      return {
        published: relay.stats.published,
        handedOver: relay.handOverStats.handedOver,
        duplicatesSuppressed: sum("duplicates") + inProcess,
        parked: sum("parked"),
        released: sum("released"),
        parkedNow: (await journal.listParked(CONSUMER_NAMES.timeline)).length,
        gapsAlerted: (await gapAlerts(journal)).length,
        deadLetters: (await journal.listDeadLetters({})).length,
        backwardsIgnored: sum("backwards"),
        byConsumer: Object.fromEntries(list.map((c) => [c.name, { ...c.stats }])),
      };
    },
  };
}

/**
 * Reconciliation of a timeline gap: every context of this shop writes its events to the one
 * journal, so a missing version is looked up at its producer and supplied: in the producer's
 * event rows (`payment/{orderId}`'s, …) on a transport the relay publishes to, or in the published
 * log on the journal transport, where the commit appends the events itself (the entries of the
 * aggregate's slice). If neither has it (another deployment, a foreign publisher, an entry pruned),
 * the gap waits for an operator, visible in `oncely.gap-alerts`.
 */
async function supplyFromProducer(journal: Journal, gap: GapInfo): Promise<GapDecision> {
  const [source, ...rest] = gap.source.split("/");
  const aggregateId = rest.join("/");
  const type = source === undefined ? undefined : PRODUCER_STREAM[source];
  if (!type) return { action: "wait" };
  const wanted = gap.toVersion - gap.fromVersion + 1;
  const inGap = (e: Envelope) =>
    e.source === source &&
    e.aggregateId === aggregateId &&
    (e.aggregateVersion ?? 0) >= gap.fromVersion &&
    (e.aggregateVersion ?? 0) <= gap.toVersion;
  const rows = await journal.listOutbox({ category: "event", stream: `${type}/${aggregateId}` });
  const fromRows = rows.map(envelopeFromOutbox).filter(inGap);
  if (fromRows.length === wanted) return { action: "supply", events: fromRows };
  const slice = sliceOf(aggregateId, journal.sliceCount ?? DEFAULT_SLICE_COUNT);
  const logged = new Map<string, Envelope>();
  for (const entry of await journal.readPublished(0, undefined, [slice])) {
    const envelope = envelopeIn(entry.body);
    if (envelope && inGap(envelope)) logged.set(envelope.eventId, envelope);
  }
  return logged.size === wanted ? { action: "supply", events: [...logged.values()] } : { action: "wait" };
}

/** A log entry's envelope, or undefined for a body that is none (a foreign publisher's). */
function envelopeIn(body: string): Envelope | undefined {
  try {
    return decodeEnvelope(body);
  } catch {
    return undefined;
  }
}

/** Gap alerts of the shop's timeline consumer (journal-wide, so they survive restarts). */
export async function gapAlerts(journal: Journal): Promise<GapAlert[]> {
  const docs = await journal.listDocuments(GAP_ALERTS);
  return docs.map((d) => d.doc as GapAlert).filter((a) => a.consumer === CONSUMER_NAMES.timeline);
}

export type ShopTransportKind = "in-process" | "nats";

export interface ShopTransportOptions {
  kind: ShopTransportKind;
  /** NATS server(s), default nats://127.0.0.1:4222. */
  natsUrl?: string | undefined;
  /** NATS only: each context connects as its own user (see integration/nats-users.ts). Unset: one anonymous connection. */
  natsPasswords?: NatsPasswords | undefined;
  /** NATS only: stream name (default `SHOP`). */
  stream?: string | undefined;
  /**
   * NATS only: the slices events are partitioned into (`<subject>.s<slice>`, docs/design/event-partitions.md),
   * the journal's `sliceCount`, so that a worker leasing slices reads only their events. Default `DEFAULT_SLICE_COUNT`.
   */
  sliceCount?: number | undefined;
  /** NATS only: where the slice readers' metrics go (the shop's registry, served at /metrics). */
  registry?: Registry | undefined;
  /** In-process only: the journal whose published log carries the events (see `JournalTransport`). */
  journal?: Journal | undefined;
  /** In-process only: duplicated, delayed and reordered delivery. */
  faults?: InProcessFaultKnobs | undefined;
  clock?: Clock;
  random?: Random;
  logger?: Logger;
}

/**
 * The transport of a shop process: in-process by default, NATS JetStream stream `SHOP` on request.
 * In-process is the journal transport: the events go to the journal's published log and every
 * consumer keeps its position there, so a worker killed at any point loses nothing and, restarted,
 * goes on from where each consumer stood (several workers on one journal each read the whole log;
 * the inboxes absorb the copies).
 */
export async function createShopTransport(options: ShopTransportOptions): Promise<Transport> {
  if (options.kind === "in-process") {
    if (!options.journal) throw new Error("the in-process transport needs the journal (its published log)");
    return new JournalTransport({
      journal: options.journal,
      clock: options.clock ?? systemClock,
      random: options.random ?? systemRandom,
      logger: options.logger ?? silentLogger,
      faults: options.faults ?? {},
      pollMs: 200,
    });
  }
  const passwords = options.natsPasswords;
  if (passwords) return transportPerUser((user) => openNats(options, { user, pass: passwords[user] }));
  return openNats(options, {});
}

async function openNats(options: ShopTransportOptions, as: { user?: string; pass?: string }): Promise<Transport> {
  const connection = await connectNats(options.natsUrl ?? "nats://127.0.0.1:4222", {
    name: `oncely-shop${as.user ? `-${as.user}` : ""}`,
    ...as,
  });
  try {
    return await natsTransport({
      connection,
      ownsConnection: true,
      stream: options.stream ?? SHOP_STREAM,
      subjects: SHOP_SUBJECTS,
      // Partitioned by slice: a worker owning some slices (SLICE_LEASES) pulls one durable per owned slice and so
      // gets the events of the actors it runs, with no forward; a worker owning every slice pulls one durable.
      partitions: { subjectPrefix: SHOP_SUBJECT_PREFIX, sliceCount: options.sliceCount ?? DEFAULT_SLICE_COUNT },
      ...(options.registry ? { registry: options.registry } : {}),
      ...(options.logger ? { logger: options.logger } : {}),
    });
  } catch (error) {
    await connection.close();
    throw error;
  }
}

/**
 * Delete the `SHOP` stream (with its durable consumers) so that a fresh journal does not meet
 * events of an earlier run: a new durable starts at the stream's first message. For the demo.
 */
export async function resetShopStream(natsUrl = "nats://127.0.0.1:4222"): Promise<void> {
  const { jetstreamManager } = await import("@nats-io/jetstream");
  const connection = await connectNats(natsUrl, { name: "oncely-shop-reset", maxReconnectAttempts: 0 });
  try {
    const jsm = await jetstreamManager(connection);
    await jsm.streams.delete(SHOP_STREAM).catch(() => false);
  } finally {
    await connection.close();
  }
}
