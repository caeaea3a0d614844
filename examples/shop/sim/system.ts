import {
  Consumer,
  Dispatcher,
  type Envelope,
  failed,
  isFinalStatus,
  messagingMetrics,
  parseAddress,
  type Random,
  Relay,
  silentLogger,
  succeeded,
} from "oncely";
import { encodeEnvelope } from "oncely/advanced";
import type { Invariant, SimCommand, SimEnv, SimulationSystem, SimWorker, SimWorld } from "oncely/testing";
import { SimulatedProvider, sequentialIds, settleFromLedger, simulatedTransport } from "oncely/testing";
import { Registry } from "prom-client";
import { CONSUMER_NAMES, SHOP_ACTORS, shopIntegration } from "../contexts.js";
import { type FulfillmentState, fulfillmentDone } from "../fulfillment/process.js";
import { SHOP_SUBJECT_PREFIX } from "../integration/events.js";
import { devShopKeys, shopSigner } from "../integration/keys.js";
import {
  EFFECT_KINDS,
  type EmailInput,
  type PaymentInput,
  type RefundInput,
  type ShipmentCheckInput,
} from "../ordering/effects.js";
import type { OrderState } from "../ordering/state.js";
import { deriveStatus } from "../ordering/status.js";
import type { PaymentState } from "../payment/actor.js";
import type { ShipmentState } from "../shipping/actor.js";
import { orderFacts, readOrderView } from "../views/order-views.js";
import {
  cancelledNotShippedUnlessRecorded,
  partialRefundsMatchMissingLines,
  refundedOnceInFull,
} from "./compensation-invariants.js";
import { customerCancels } from "./customer.js";
import { journalLogWorker, logViewsHoldEveryEvent } from "./journal-log.js";
import { type JourneyQueued, journeysFoldEveryEvent, journeysWorker } from "./journeys.js";
import { peerForwardsOnce, peerForwardsWorker } from "./peer-forwards.js";
import {
  handOverChecked,
  handOversInserted,
  reminderActor,
  reminderProvider,
  reminderTerminal,
  reminderWorkload,
} from "./reminders.js";
import { sliceOwnersWorker, staleOwnerFenced } from "./slice-owners.js";
import { askWarehouse, loseWebhook, shortShip, warehouseProviders, warehouseWorker } from "./warehouse.js";

/**
 * The reference shop under deterministic simulation: every bounded context (ordering, payment,
 * shipping, the fulfillment process, the views) with the real actors, dispatchers, relay and
 * consumers, in-process providers whose ledgers the invariants audit, and a simulated warehouse
 * that ships accepted picklists and calls the webhook at least once (sometimes twice), cancels
 * picklists it has not shipped, and reports shortages (`warehouse.ts`). At `act` steps the
 * customer cancels an order (`customer.ts`), the warehouse reports lines it cannot ship, or it
 * ships a picklist whose webhook is lost for good (the shipment's check must find it); the
 * compensation invariants (`compensation-invariants.ts`) hold the refunds to the ledgers.
 *
 * The broker is a tiny in-memory queue per durable consumer, kept outside the process (it
 * survives crashes, as a broker would): the relay's publish appends to it; the broker worker
 * hands messages to the consumers in an order, and with duplicates, that the seed picks through
 * `env.random`, and removes a message only once the consumer acknowledged it. No real transport
 * (no timers, no threads), so a seed replays exactly.
 */
export interface ShopSimOptions {
  orders?: number | undefined;
  /** Fix whether the payment provider dedups by idempotency key (default: the seed draws it); false: only lookup may settle. */
  paymentDedups?: boolean | undefined;
  /** Fix dedup for every provider (default: the seed draws it per provider). */
  allDedup?: boolean | undefined;
}

/** `npm run sim`'s default budget, which the mutation check holds to catching every planted bug. */
export const SHOP_SIM_DEFAULTS = { seeds: 50, steps: 250 };

const policy = { timeoutMs: 2_000, leaseMs: 10_000, rerunAfterNotFoundMs: 120_000, lookupAttempts: 4 };

export function shopSimulation(options: ShopSimOptions = {}): SimulationSystem {
  return {
    name: "shop",
    actors: [...SHOP_ACTORS, reminderActor],
    providers: (world) => [
      new SimulatedProvider<PaymentInput, { paymentId: string }>({
        kind: EFFECT_KINDS.payment,
        dedups: options.paymentDedups ?? options.allDedup ?? world.dedups(EFFECT_KINDS.payment),
        lookup: true,
        // Amounts that are multiples of 13 are declined: a definite failure.
        execute: (input, _key, n) =>
          input.amount % 13 === 0 ? failed("card declined") : succeeded({ paymentId: `pay_${n}` }),
        policy,
      }),
      new SimulatedProvider<EmailInput, { messageId: string }>({
        kind: EFFECT_KINDS.email,
        dedups: options.allDedup ?? world.dedups(EFFECT_KINDS.email),
        lookup: true,
        execute: (_input, _key, n) => succeeded({ messageId: `msg_${n}` }),
        policy,
      }),
      ...warehouseProviders((kind) => options.allDedup ?? world.dedups(kind)),
      new SimulatedProvider<RefundInput, { refundId: string }>({
        kind: EFFECT_KINDS.refund,
        dedups: options.allDedup ?? world.dedups(EFFECT_KINDS.refund),
        lookup: true,
        execute: (_input, _key, n) => succeeded({ refundId: `ref_${n}` }),
        policy,
      }),
      reminderProvider(options.allDedup ?? world.dedups("reminder-mail")),
    ],
    workers: (env) => [
      ...[1, 2].map((n): SimWorker => {
        const dispatcher = new Dispatcher({
          // The first takes rows handed over at their commit (see `handingOver`); the second only claims.
          journal: n === 1 ? withoutWakeUps(env.journal) : env.journal,
          // The first's hand-overs are checked against the journal (see `handOverChecked`).
          runtime: n === 1 ? handOverChecked(env) : env.runtime,
          handlers: env.handlers,
          owner: `g${env.generation}-dispatcher-${n}`,
          clock: env.clock,
          random: env.random,
          faults: env.faults,
          batchSize: 8,
          // Started only to take hand-overs: its own loop never polls within a run.
          pollIntervalMs: NEVER_MS,
        });
        if (n === 1) dispatcher.start();
        return { name: dispatcher.owner, runOnce: () => dispatcher.runOnce() };
      }),
      relayWorker(env),
      brokerWorker(env),
      journeysWorker(env, journeysQueue(env)),
      journalLogWorker(env, journalLogFeed(env)),
      // One slot for both ownership parts, the second once the first is done: another worker would move every
      // seed's worker picks (a pick is taken modulo the number of workers) and with them what the shop's seeds reach.
      inTurn(sliceOwnersWorker(env), peerForwardsWorker(env)),
      warehouseWorker(env),
    ],
    operator: settleAsOperator,
    // The customer cancels, the warehouse reports shortages and loses webhooks, at steps of their own, at moments the seed picks.
    actions: [customerCancels, shortShip, loseWebhook],
    weights: { act: 3 },
    workload: (random: Random): SimCommand[] => [
      ...Array.from({ length: options.orders ?? 6 }, (_, i) => {
        const lines = Array.from({ length: 1 + Math.floor(random.next() * 3) }, (_, l) => ({
          sku: `sku-${l + 1}`,
          quantity: 1 + Math.floor(random.next() * 3),
          unitPrice: 100 + Math.floor(random.next() * 5_000),
        }));
        return {
          address: `order/o${i + 1}`,
          command: { type: "PlaceOrder", customerEmail: `c${i + 1}@example.com`, currency: "EUR", lines },
          messageId: `place:o${i + 1}`,
        };
      }),
      ...reminderWorkload(),
    ],
    isTerminal: (address, state) => {
      switch (parseAddress(address).type) {
        case "order": {
          const status = deriveStatus(state as OrderState);
          return (
            status === "completed" || status === "payment_failed" || status === "out_of_stock" || status === "cancelled"
          );
        }
        case "payment":
          return ["Completed", "Failed"].includes((state as PaymentState).status);
        case "shipment": {
          const shipment = state as ShipmentState;
          if (shipment.givenUp !== null) return true;
          const cancel = shipment.cancel;
          if (cancel && isFinalStatus(cancel.status)) {
            // A CancelShipping delivered ahead of the StartShipping sent before it: shipping never starts.
            if (shipment.lines === null) return true;
            // A picklist refused while the cancel was asked for is not asked again: nothing will ship.
            if (shipment.picklist.status === "Failed") return true;
            // Cancelled at the warehouse: nothing will ship, once the picklist's own request settled.
            if (cancel.status === "Completed") return isFinalStatus(shipment.picklist.status);
          }
          return shipment.shipment !== null && ["Completed", "Failed"].includes(shipment.picklist.status);
        }
        case "fulfillment":
          return fulfillmentDone(state as FulfillmentState);
        case "reminder":
          return reminderTerminal(state);
        default:
          return false;
      }
    },
    invariants: [
      oneChargePerPaidOrder,
      moneyConserved,
      refundedOnceInFull,
      cancelledNotShippedUnlessRecorded,
      partialRefundsMatchMissingLines,
      viewsAgreeWithOrders,
      nothingParkedOrDead,
      journeysFoldEveryEvent,
      handOversInserted,
      logViewsHoldEveryEvent,
      staleOwnerFenced,
      peerForwardsOnce,
    ],
    reproduce: (seed, steps, run) =>
      [
        `npm run sim -- --seed ${seed}`,
        ...(options.orders !== undefined ? [`--orders ${options.orders}`] : []),
        ...(options.paymentDedups === false ? ["--payment-no-dedup"] : []),
        ...(options.allDedup ? ["--all-dedup"] : []),
        ...(run.alwaysRecover ? ["--always-recover"] : []),
        ...(run.snapshotEvery !== undefined ? [`--snapshot-every ${run.snapshotEvery}`] : []),
        `--replay "${steps}"`,
      ].join(" "),
  };
}

/**
 * Settles what waits for an operator, as a person would: each effect from the provider's record of
 * its key (the simulator's operator), and a shipment check by asking the warehouse what became of
 * the picklist (a read leaves no record to look up).
 */
const settleAsOperator = (world: SimWorld): Promise<number> =>
  settleFromLedger(world, (item) =>
    item.kind === EFFECT_KINDS.shipmentCheck ? askWarehouse(world, item.input as ShipmentCheckInput) : undefined,
  );

interface Queued {
  envelope: Envelope;
  attempt: number;
}

/** The broker's queues, one per durable consumer; outside the process, so they survive crashes. */
function brokerQueues(env: SimEnv): Map<string, Queued[]> {
  if (!env.outside.has("broker")) {
    env.outside.set("broker", new Map(Object.values(CONSUMER_NAMES).map((name) => [name, [] as Queued[]])));
  }
  return env.outside.get("broker") as Map<string, Queued[]>;
}

/** Longer than any run's simulated time. */
const NEVER_MS = 2 ** 40;

/** One worker slot for two parts: the second runs at the steps the first has nothing left to do. */
function inTurn(first: SimWorker, second: SimWorker): SimWorker {
  return {
    name: first.name,
    runOnce: async () => (await first.runOnce()) || second.runOnce(),
  };
}

/**
 * The journal as a started dispatcher that takes hand-overs sees it in the simulator: no wake-up
 * on new rows, so its own loop claims once when it starts and then sleeps past the end of the
 * run. It still takes every due row its process commits (effects handed over at commit) and runs
 * it at once, beside the steps (deterministic: no timer, no thread), exactly as in production; a
 * crash leaves those rows leased until their lease ends, then any dispatcher's `work` step claims
 * them. `work` steps also run its claims, as for the other dispatcher.
 */
function withoutWakeUps(journal: SimEnv["journal"]): SimEnv["journal"] {
  return new Proxy(journal, {
    get(target, property, receiver) {
      if (property === "onOutbox") return () => () => {};
      return Reflect.get(target, property, receiver);
    },
  });
}

/** What the relay published, still to append to the journal's published log (see `journal-log.ts`). */
function journalLogFeed(env: SimEnv): Envelope[] {
  if (!env.outside.has("journal-log")) env.outside.set("journal-log", [] as Envelope[]);
  return env.outside.get("journal-log") as Envelope[];
}

/** The journeys consumer's queue (see `journeys.ts`), outside the process as the broker's are. */
function journeysQueue(env: SimEnv): JourneyQueued[] {
  if (!env.outside.has("journeys")) env.outside.set("journeys", [] as JourneyQueued[]);
  return env.outside.get("journeys") as JourneyQueued[];
}

/**
 * The relay, publishing into the broker's queues (every durable subscribes to `shop.>` here)
 * through a transport that fails, loses acknowledgements or duplicates on the seed's orders.
 */
function relayWorker(env: SimEnv): SimWorker {
  const queues = brokerQueues(env);
  const journeys = journeysQueue(env);
  const log = journalLogFeed(env);
  const transport = simulatedTransport(env, (envelope) => {
    for (const queue of queues.values()) queue.push({ envelope, attempt: 0 });
    journeys.push({ envelope, attempt: 0 });
    log.push(envelope);
  });
  const relay = new Relay({
    journal: env.journal,
    transport,
    // The shop's consumers (see shopIntegration) verify: sign as the shop's relay does.
    signer: shopSigner(devShopKeys()),
    subjectPrefix: SHOP_SUBJECT_PREFIX,
    owner: `g${env.generation}-relay`,
    clock: env.clock,
    faults: env.faults,
    // Short: the calm phase moves the clock 1 ms per idle round while a row blocked behind a dead
    // relay's lease (in-stream order) looks due, so a long lease would outlast its round budget.
    // A relay slower than this publishes again: harmless, every consumer dedups.
    leaseMs: 200,
    batchSize: 8,
  });
  return { name: `g${env.generation}-relay`, runOnce: () => relay.runOnce() };
}

/**
 * Hands one message per consumer per turn to the consumers (the consumers of this generation),
 * picked at random from the queue: reordering. An acknowledged message is sometimes delivered
 * again (a duplicate); a nak'ed one stays queued. Then releases what a crash between an apply and
 * its release left parked (the gap check does that).
 */
function brokerWorker(env: SimEnv): SimWorker {
  const queues = brokerQueues(env);
  // The shop's consumers as its host builds them (see shopIntegration), on this generation's
  // runtime; never subscribed nor watched: the broker worker below delivers and checks the gaps.
  const { consumers: definitions } = shopIntegration({
    journal: env.journal,
    // Injected faults must never exhaust a message: every message is meant to be applied once faults stop.
    maxDeliveries: 1_000_000,
    gapTimeoutMs: 60_000,
  });
  const metrics = messagingMetrics(new Registry());
  const ids = sequentialIds(`g${env.generation}-dl`);
  const consumers = new Map<string, Consumer>(
    definitions.map(
      ({ subjects: _subjects, gapCheckEveryMs: _every, concurrency: _concurrency, transport: _t, ...own }) => [
        own.name,
        new Consumer({
          ...own,
          journal: env.journal,
          runtime: env.runtime,
          clock: env.clock,
          ids,
          faults: env.faults,
          metrics,
          logger: silentLogger,
        }),
      ],
    ),
  );
  return {
    name: `g${env.generation}-broker`,
    async runOnce() {
      let work = 0;
      for (const [name, queue] of queues) {
        if (queue.length === 0) continue;
        const consumer = consumers.get(name) as Consumer;
        const index = Math.floor(env.random.next() * queue.length);
        const item = queue[index] as Queued;
        item.attempt++;
        const outcome = await consumer.deliver({
          subject: `${SHOP_SUBJECT_PREFIX}.${item.envelope.source}.${item.envelope.type}`,
          body: encodeEnvelope(item.envelope),
          messageId: item.envelope.eventId,
          attempt: item.attempt,
          maxDeliveries: 1_000_000,
        });
        work++;
        // Gone already when a turn of this worker ran meanwhile (a `pause` inside a handed-over
        // handler runs another worker's turn beside the current step): splice(-1) would drop another.
        const at = queue.indexOf(item);
        if (outcome.kind !== "nak" && env.random.next() >= 0.1 && at >= 0) queue.splice(at, 1);
      }
      const timeline = consumers.get(CONSUMER_NAMES.timeline) as Consumer;
      const before = (await env.journal.listParked(timeline.name)).length;
      await timeline.checkGaps();
      const after = (await env.journal.listParked(timeline.name)).length;
      return work + (before - after);
    },
  };
}

const ordersOf = async (world: Parameters<Invariant["check"]>[0]) => {
  const orders: OrderState[] = [];
  for (const address of await world.journal.listStreams("order/")) {
    orders.push((await world.runtime.state<OrderState>(address)).state);
  }
  return orders;
};

/** Exactly one charge per paid order and none for a declined one, by the payment provider's ledger. */
const oneChargePerPaidOrder: Invariant = {
  name: "one-charge-per-paid-order",
  async check(world) {
    const payment = world.providers.find((p) => p.kind === EFFECT_KINDS.payment) as SimulatedProvider<PaymentInput>;
    const problems: string[] = [];
    for (const order of await ordersOf(world)) {
      const charges = payment.executions.filter(
        (e) => e.performed && e.result.outcome === "succeeded" && e.input.orderId === order.orderId,
      );
      const expected = order.payment.status === "Completed" ? 1 : 0;
      if (charges.length !== expected) {
        problems.push(`order ${order.orderId} (payment ${order.payment.status}) was charged ${charges.length} times`);
      }
    }
    return problems;
  },
};

/** The order view (built from integration events only) agrees with the order actors' facts. */
const viewsAgreeWithOrders: Invariant = {
  name: "views-agree-with-orders",
  async check(world) {
    const problems: string[] = [];
    for (const order of await ordersOf(world)) {
      const view = await orderFacts.read(world.journal, order.orderId);
      const payment = { Completed: "Processed", Failed: "Failed" }[order.payment.status as string] ?? null;
      const viewPayment = view?.payment === "NeedsAttention" ? null : (view?.payment ?? null);
      if (viewPayment !== payment)
        problems.push(`order ${order.orderId}: payment ${order.payment.status}, view ${view?.payment}`);
      const shipped = order.shipping.status === "Completed";
      if (shipped !== (view?.shipping === "Shipped"))
        problems.push(`order ${order.orderId}: shipped ${shipped}, view ${view?.shipping}`);
      const timeline = (await readOrderView(world.journal, order.orderId))?.timeline ?? [];
      const published = (await world.journal.listOutbox({ category: "event" })).filter(
        (r) => (r.payload as Envelope).aggregateId === order.orderId,
      ).length;
      if (timeline.length !== published) {
        problems.push(`order ${order.orderId}: ${published} events published, timeline has ${timeline.length}`);
      }
    }
    return problems;
  },
};

/** Once faults stop, nothing stays parked and nothing was dead-lettered (every message is valid here). */
const nothingParkedOrDead: Invariant = {
  name: "nothing-parked-or-dead",
  async check(world) {
    const parked = await world.journal.listParked(CONSUMER_NAMES.timeline);
    const dead = await world.journal.listDeadLetters({});
    return [
      ...parked.map((p) => `parked ${p.source}@${p.version}`),
      ...dead.map((d) => `dead letter ${d.id}: ${d.error}`),
    ];
  },
};

const performedSum = <I extends { amount: number }>(provider: SimulatedProvider<I>, of: (input: I) => boolean) =>
  provider.executions
    .filter((e) => e.performed && e.result.outcome === "succeeded" && of(e.input))
    .reduce((sum, e) => sum + e.input.amount, 0);
const providerOf = <I>(world: Parameters<Invariant["check"]>[0], kind: string) =>
  world.providers.find((p) => p.kind === kind) as SimulatedProvider<I>;

/** The money the provider kept (charges less refunds) equals what the orders the shop believes paid kept. */
const moneyConserved: Invariant = {
  name: "money-conserved",
  async check(world) {
    const kept =
      performedSum(providerOf<PaymentInput>(world, EFFECT_KINDS.payment), () => true) -
      performedSum(providerOf<RefundInput>(world, EFFECT_KINDS.refund), () => true);
    const owed = (await ordersOf(world))
      .filter((o) => o.payment.status === "Completed")
      .reduce(
        (sum, o) =>
          sum +
          (o.details?.amount ?? 0) -
          o.refunds.filter((r) => r.status === "Completed").reduce((n, r) => n + r.amount, 0),
        0,
      );
    return kept === owed ? [] : [`provider kept ${kept} but paid orders, less their refunds, amount to ${owed}`];
  },
};
