import type { Consumer, EffectOutcome, Journal, OutboxRow, Typed } from "oncely";
import { createHost, type Envelope, InProcessTransport, type Runtime } from "oncely";
import { envelopeFromOutbox, TIMER_KIND } from "oncely/advanced";
import { memoryJournal, SimulatedClock, sequentialIds } from "oncely/testing";
import { Registry } from "prom-client";
import { SHOP_ACTORS, type ShopContexts, shopContexts, shopIntegration } from "../contexts.js";
import type { PlaceOrder } from "../ordering/commands.js";
import { shipmentAddress, warehouseMessageId } from "../shipping/actor.js";

/**
 * A shop world for tests: every context in one host (as the shop builds it, see
 * `shopIntegration`) on a memory journal, never started: no dispatcher, relay nor subscription
 * runs, so a test hands envelopes to the consumers in whatever order, duplication and concurrency
 * it wants, or subscribes them and drains the relay itself.
 */
export interface ShopWorld {
  journal: Journal;
  runtime: Runtime;
  contexts: ShopContexts;
  clock: SimulatedClock;
  transport: InProcessTransport;
}

export function shopWorld(journal: Journal = memoryJournal()): ShopWorld {
  const clock = new SimulatedClock(Date.UTC(2026, 0, 1));
  const transport = new InProcessTransport({ clock });
  const registry = new Registry();
  const host = createHost({
    journal,
    actors: SHOP_ACTORS,
    clock,
    ids: sequentialIds("e"),
    transport,
    registry,
    ...shopIntegration({ journal, gapTimeoutMs: 60_000 }),
  });
  const contexts = shopContexts(host, { registry, clock, transport });
  return { journal, runtime: host.runtime, contexts, clock, transport };
}

export const allConsumers = (world: ShopWorld): Consumer[] => Object.values(world.contexts.consumers);

export type PaymentScript = "paid" | "declined" | "attention-then-paid" | "attention-then-declined";
export interface OrderScript {
  orderId: string;
  order: PlaceOrder;
  payment: PaymentScript;
  /** The warehouse's webhook arrives before the picklist's outcome is recorded. */
  shipBeforePicklistOutcome: boolean;
}

export const placeOrder = (world: ShopWorld, script: OrderScript) =>
  world.runtime.send(`order/${script.orderId}`, script.order, { messageId: `place:${script.orderId}` });

/** The parts of an outcome a dispatcher takes from the effect's outbox row: key, kind and input. */
const ofRow = (row: OutboxRow) => ({ key: row.id, kind: row.kind, input: (row.payload as { input: unknown }).input });
const succeeded = (row: OutboxRow, result: unknown, via: "run" | "operator" = "run"): EffectOutcome => ({
  type: "oncely.effect.succeeded",
  ...ofRow(row),
  result,
  attempt: 1,
  via,
});
const failed = (row: OutboxRow, error: string, via: "run" | "operator" = "run"): EffectOutcome => ({
  type: "oncely.effect.failed",
  ...ofRow(row),
  error,
  attempt: 1,
  via,
});

/**
 * Run the whole shop in order, as a scripted outside world: every effect row is answered as the
 * script says (the payment maybe via reconciliation), every StartShipping is delivered, every
 * picklist is followed by the warehouse's webhook, and every published event goes to every
 * consumer in publication order. Returns the integration events in publication order.
 */
export async function produce(
  scripts: OrderScript[],
  world: ShopWorld = shopWorld(),
): Promise<{ world: ShopWorld; envelopes: Envelope[] }> {
  const envelopes = await drive(world, scripts, async (envelope) => {
    for (const consumer of allConsumers(world)) await consumer.handle(envelope);
  });
  return { world, envelopes };
}

/**
 * As `produce`, in a given world, with events delivered through the real path: the relay signs
 * and publishes them on the in-process transport (to which the test subscribed the consumers),
 * and each consumer verifies before it handles.
 */
export function produceThroughTransport(world: ShopWorld, scripts: OrderScript[]): Promise<Envelope[]> {
  return drive(world, scripts, async () => {
    await world.contexts.relay.drain();
    await world.transport.idle();
  });
}

async function drive(
  world: ShopWorld,
  scripts: OrderScript[],
  deliver: (envelope: Envelope) => Promise<void>,
): Promise<Envelope[]> {
  const { journal, runtime } = world;
  const byId = new Map(scripts.map((s) => [s.orderId, s]));
  for (const script of scripts) await placeOrder(world, script);
  const handled = new Set<string>();
  const envelopes: Envelope[] = [];
  for (;;) {
    const rows = (await journal.listOutbox({})).filter((r) => !handled.has(r.id)).sort((a, b) => a.seq - b.seq);
    const row = rows[0];
    if (!row) break;
    handled.add(row.id);
    if (row.category === "event") {
      const envelope = envelopeFromOutbox(row);
      envelopes.push(envelope);
      await deliver(envelope);
      continue;
    }
    if (row.category === "message") {
      const { to, command } = row.payload as { to: string; command: Typed };
      const result = await runtime.send(to, command, { messageId: row.id });
      await runtime.send(row.stream, { type: "oncely.message.delivered", id: row.id, to, reply: result.reply });
      continue;
    }
    // Durable timers (the shipment deadline) are not due within a script: every shipment comes in time.
    if (row.kind === TIMER_KIND) continue;
    const orderId = (row.payload as { input: { orderId: string } }).input.orderId;
    const script = byId.get(orderId);
    if (!script) throw new Error(`effect ${row.id} for an unscripted order`);
    if (row.kind === "payment") {
      if (script.payment.startsWith("attention")) {
        await runtime.send(row.stream, {
          type: "oncely.effect.needs-reconciliation",
          ...ofRow(row),
          error: "timeout",
          attempt: 3,
        });
      }
      const via = script.payment.startsWith("attention") ? "operator" : "run";
      const outcome = script.payment.endsWith("paid")
        ? succeeded(row, { paymentId: `pay_${orderId}` }, via)
        : failed(row, "card declined", via);
      await runtime.send(row.stream, outcome);
    } else if (row.kind === "picklist") {
      const webhook = () =>
        runtime.send(
          shipmentAddress(orderId),
          {
            type: "RecordShipment",
            eventId: `wh-${orderId}`,
            shipmentId: `shp_${orderId}`,
            occurredAt: "2026-01-02T00:00:00.000Z",
          },
          { messageId: warehouseMessageId(`wh-${orderId}`) },
        );
      if (script.shipBeforePicklistOutcome) await webhook();
      await runtime.send(row.stream, succeeded(row, { picklistId: `pck_${orderId}` }));
      if (!script.shipBeforePicklistOutcome) await webhook();
    } else {
      await runtime.send(row.stream, succeeded(row, { messageId: `msg_${row.id}` }));
    }
  }
  return envelopes;
}

/** Everything a consumer side ends with, in a comparable form. */
export async function snapshot(world: ShopWorld) {
  const { journal, runtime } = world;
  const states: Record<string, unknown> = {};
  for (const prefix of ["order/", "payment/", "fulfillment/", "shipment/"]) {
    for (const address of await journal.listStreams(prefix)) states[address] = (await runtime.state(address)).state;
  }
  const docs = async (collection: string) =>
    Object.fromEntries((await journal.listDocuments(collection)).map((d) => [d.id, d.doc]));
  const outbox = (await journal.listOutbox({}))
    .filter((r) => r.category !== "event")
    .map((r) => `${r.category}:${r.id}`)
    .sort();
  return {
    states,
    views: await docs("order-views"),
    timelines: await docs("order-timelines"),
    outbox,
  };
}
