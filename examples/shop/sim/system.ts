import type { Random } from "../../../src/core/clock.js";
import { Dispatcher } from "../../../src/effects/dispatcher.js";
import { failed, succeeded } from "../../../src/effects/types.js";
import { SimulatedProvider } from "../../../src/testing/simulation/provider.js";
import type {
  Invariant,
  SimCommand,
  SimEnv,
  SimulationSystem,
  SimWorker,
} from "../../../src/testing/simulation/world.js";
import { orderActor } from "../ordering/actor.js";
import { EFFECT_KINDS, type EmailInput, type PaymentInput, type PicklistInput } from "../ordering/effects.js";
import type { OrderState } from "../ordering/state.js";
import { deriveStatus } from "../ordering/status.js";

/**
 * The reference shop under deterministic simulation: the real order actor and the real
 * dispatcher, with in-process providers whose ledgers the invariants audit, and a simulated
 * warehouse that ships accepted picklists and calls the webhook at least once (sometimes twice).
 */
export interface ShopSimOptions {
  orders?: number;
  /** The payment provider dedups by idempotency key (default true); false: only lookup may settle. */
  paymentDedups?: boolean;
}

const policy = { timeoutMs: 2_000, leaseMs: 10_000, rerunAfterNotFoundMs: 120_000, lookupAttempts: 4 };

export function shopSimulation(options: ShopSimOptions = {}): SimulationSystem {
  return {
    name: "shop",
    actors: [orderActor],
    providers: () => [
      new SimulatedProvider<PaymentInput, { paymentId: string }>({
        kind: EFFECT_KINDS.payment,
        dedups: options.paymentDedups ?? true,
        lookup: true,
        // Amounts that are multiples of 13 are declined: a definite failure.
        execute: (input, _key, n) =>
          input.amount % 13 === 0 ? failed("card declined") : succeeded({ paymentId: `pay_${n}` }),
        policy,
      }),
      new SimulatedProvider<EmailInput, { messageId: string }>({
        kind: EFFECT_KINDS.email,
        dedups: true,
        lookup: true,
        execute: (_input, _key, n) => succeeded({ messageId: `msg_${n}` }),
        policy,
      }),
      new SimulatedProvider<PicklistInput, { picklistId: string }>({
        kind: EFFECT_KINDS.picklist,
        dedups: true,
        lookup: true,
        execute: (_input, _key, n) => succeeded({ picklistId: `pck_${n}` }),
        policy,
      }),
    ],
    workers: (env) => [
      ...[1, 2].map((n): SimWorker => {
        const dispatcher = new Dispatcher({
          journal: env.journal,
          runtime: env.runtime,
          handlers: env.handlers,
          owner: `g${env.generation}-dispatcher-${n}`,
          clock: env.clock,
          random: env.random,
          faults: env.faults,
          batchSize: 8,
        });
        return { name: dispatcher.owner, runOnce: () => dispatcher.runOnce() };
      }),
      warehouse(env),
    ],
    workload: (random: Random): SimCommand[] =>
      Array.from({ length: options.orders ?? 6 }, (_, i) => {
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
    isTerminal: (_address, state) => {
      const status = deriveStatus(state as OrderState);
      return status === "completed" || status === "payment_failed";
    },
    invariants: [oneChargePerPaidOrder, moneyConserved],
    reproduce: (seed, steps) => `npm run sim -- --seed ${seed} --replay "${steps}"`,
  };
}

/**
 * The warehouse: ships every picklist it accepted and calls the shop's webhook until it is
 * acknowledged; now and then it calls again for one already acknowledged (a duplicate webhook).
 */
function warehouse(env: SimEnv): SimWorker {
  const picklists = env.providers.find((p) => p.kind === EFFECT_KINDS.picklist) as SimulatedProvider<PicklistInput>;
  if (!env.outside.has("warehouse:acknowledged")) env.outside.set("warehouse:acknowledged", new Set<string>());
  const acknowledged = env.outside.get("warehouse:acknowledged") as Set<string>;
  return {
    name: "warehouse",
    async runOnce() {
      let calls = 0;
      for (const execution of picklists.executions) {
        if (!execution.performed || execution.result.outcome !== "succeeded") continue;
        const again = acknowledged.has(execution.key);
        if (again && env.random.next() > 0.1) continue;
        const shipment = {
          type: "RecordShipment",
          eventId: `ship:${execution.key}`,
          shipmentId: `shp_${execution.key}`,
          occurredAt: new Date(env.clock.now()).toISOString(),
        };
        await env.runtime.send(`order/${execution.input.orderId}`, shipment, {
          messageId: `warehouse:${shipment.eventId}`,
        });
        acknowledged.add(execution.key);
        calls++;
      }
      return calls;
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

/** The money the provider took equals the amounts of the orders the shop believes paid. */
const moneyConserved: Invariant = {
  name: "money-conserved",
  async check(world) {
    const payment = world.providers.find((p) => p.kind === EFFECT_KINDS.payment) as SimulatedProvider<PaymentInput>;
    const taken = payment.executions
      .filter((e) => e.performed && e.result.outcome === "succeeded")
      .reduce((sum, e) => sum + e.input.amount, 0);
    const owed = (await ordersOf(world))
      .filter((o) => o.payment.status === "Completed")
      .reduce((sum, o) => sum + (o.details?.amount ?? 0), 0);
    return taken === owed ? [] : [`provider took ${taken} but paid orders amount to ${owed}`];
  },
};
