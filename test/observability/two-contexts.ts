import type { Registry } from "prom-client";
import { defineActor } from "../../src/core/actor.js";
import { seededRandom } from "../../src/core/clock.js";
import type { EffectOutcome } from "../../src/core/decider.js";
import { Runtime } from "../../src/core/runtime.js";
import { Dispatcher } from "../../src/effects/dispatcher.js";
import type { EffectHandler } from "../../src/effects/types.js";
import { memoryJournal } from "../../src/journal/memory.js";
import { Consumer } from "../../src/messaging/consumer.js";
import { messagingMetrics } from "../../src/messaging/metrics.js";
import { Relay } from "../../src/messaging/relay.js";
import { InProcessTransport } from "../../src/messaging/transports/in-process.js";
import { SimulatedClock } from "../../src/testing/clock.js";

/**
 * Two bounded contexts of one order, each with its own journal, joined by the in-process
 * transport: `ordering` charges the order (an effect) and publishes `OrderPaid` when the charge
 * succeeds; `shipping` consumes it and sends `Ship` to its shipment actor.
 */
type OrderCommand = { type: "PlaceOrder"; amount: number } | EffectOutcome;
type OrderEvent = { type: "OrderPlaced"; amount: number } | { type: "OrderPaid"; chargeId: string };

export const chargeKey = (id: string) => `order:${id}:charge`;

const order = defineActor<{ paid: boolean }, OrderCommand, OrderEvent>({
  type: "order",
  initialState: () => ({ paid: false }),
  evolve: (state, event) => (event.type === "OrderPaid" ? { paid: true } : state),
  decide(command, state, ctx) {
    if (command.type === "PlaceOrder") {
      return {
        events: [{ type: "OrderPlaced", amount: command.amount }],
        effects: [{ key: chargeKey(ctx.id), kind: "charge", input: { amount: command.amount } }],
      };
    }
    if (command.type === "oncely.effect.succeeded" && !state.paid) {
      const chargeId = String((command.result as { id?: unknown } | null)?.id);
      return {
        events: [{ type: "OrderPaid", chargeId }],
        publish: [
          { eventId: `${ctx.id}:OrderPaid`, type: "OrderPaid", source: "ordering", aggregateId: ctx.id, payload: {} },
        ],
      };
    }
    return {};
  },
});

const shipment = defineActor<{ requested: boolean }, { type: "Ship" }, { type: "ShipmentRequested" }>({
  type: "shipment",
  initialState: () => ({ requested: false }),
  evolve: () => ({ requested: true }),
  decide: (_command, state) => (state.requested ? {} : { events: [{ type: "ShipmentRequested" }] }),
});

export function twoContexts(options: { registry?: Registry; charge?: EffectHandler } = {}) {
  const clock = new SimulatedClock();
  const registry = options.registry;
  const metrics = messagingMetrics(registry);
  const transport = new InProcessTransport({ random: seededRandom(1), retryBaseMs: 1 });
  const ordering = memoryJournal();
  const shipping = memoryJournal();
  const orders = new Runtime({ journal: ordering, actors: [order], clock, ...(registry ? { registry } : {}) });
  const shipments = new Runtime({ journal: shipping, actors: [shipment], clock, ...(registry ? { registry } : {}) });
  const charge: EffectHandler = options.charge ?? {
    kind: "charge",
    run: async () => ({ outcome: "succeeded", result: { id: "ch-1" } }),
  };
  const dispatcher = new Dispatcher({
    journal: ordering,
    runtime: orders,
    owner: "ordering-1",
    handlers: [charge],
    clock,
    random: seededRandom(2),
    ...(registry ? { registry } : {}),
  });
  const relay = new Relay({ journal: ordering, transport, clock, metrics, subjectPrefix: "shop" });
  const consumer = new Consumer({
    name: "shipping",
    journal: shipping,
    runtime: shipments,
    clock,
    metrics,
    handler: {
      kind: "command",
      route: (e) =>
        e.type === "OrderPaid" ? { address: `shipment/${e.aggregateId}`, command: { type: "Ship" } } : undefined,
    },
  });
  return { clock, transport, ordering, shipping, orders, shipments, dispatcher, relay, consumer };
}
