import { type DefiniteResult, failed, succeeded } from "oncely";
import type { SimAction, SimEnv, SimWorker } from "oncely/testing";
import { SimulatedProvider } from "oncely/testing";
import {
  type CheckedShipment,
  EFFECT_KINDS,
  type PicklistCancelInput,
  type PicklistCancelResult,
  type PicklistInput,
  type ShipmentCheckInput,
  type ShipmentCheckResult,
} from "../ordering/effects.js";
import { type RecordLinesUnavailable, shipmentAddress, warehouseMessageId } from "../shipping/actor.js";

/**
 * The simulated warehouse: three providers (picklists, their cancellation, and the lookup of a
 * picklist's shipment) sharing one stock room, a worker that ships what was accepted and calls the
 * shop's webhook, the `short-ship` action, by which it reports lines of an accepted picklist it
 * cannot ship, and the `lose-webhook` action, by which it ships one whose webhook never comes (the
 * shop learns of it only by asking: the shipment's check).
 *
 * As the real one (providers/warehouse), it refuses a picklist of an order it cancelled, refuses to
 * cancel an order it shipped, and never ships a cancelled order's picklist. Whether the cancel or
 * the shipment comes first is the seed's: both are steps of their own.
 */

/** The line the simulated warehouse cannot ship at all (drawn for about one order in ten): refused. */
const OUT_OF_STOCK = { sku: "sku-3", quantity: 3 };

interface StockRoom {
  /** Orders whose goods left (shipped before any cancellation reached the warehouse). */
  shipped: Set<string>;
  /** Orders whose picklists the warehouse cancelled: none of them ships, no new one is taken. */
  cancelled: Set<string>;
  /** What shipped, by picklist key: what its webhook says, and what the lookup answers. */
  shipments: Map<string, CheckedShipment>;
  /** Picklist keys whose webhook is lost for good: never called. */
  lost: Set<string>;
}
/** The stock room of a run, found from its picklist provider (providers are made once per run). */
const rooms = new WeakMap<SimulatedProvider<PicklistInput>, StockRoom>();

const policy = { timeoutMs: 2_000, leaseMs: 10_000, rerunAfterNotFoundMs: 120_000, lookupAttempts: 4 };

export function warehouseProviders(dedups: (kind: string) => boolean) {
  const room: StockRoom = { shipped: new Set(), cancelled: new Set(), shipments: new Map(), lost: new Set() };
  const picklists = new SimulatedProvider<PicklistInput, { picklistId: string }>({
    kind: EFFECT_KINDS.picklist,
    dedups: dedups(EFFECT_KINDS.picklist),
    lookup: true,
    // Three of the third sku are more than the warehouse has: refused for good, and the order refunds.
    execute: (input, _key, n) => {
      if (room.cancelled.has(input.orderId)) return failed(`order ${input.orderId} was cancelled`);
      return input.lines.some((l) => l.sku === OUT_OF_STOCK.sku && l.quantity === OUT_OF_STOCK.quantity)
        ? failed(`out of stock: ${OUT_OF_STOCK.sku}`)
        : succeeded({ picklistId: `pck_${n}` });
    },
    policy,
  });
  const cancels = new SimulatedProvider<PicklistCancelInput, PicklistCancelResult>({
    kind: EFFECT_KINDS.picklistCancel,
    dedups: dedups(EFFECT_KINDS.picklistCancel),
    lookup: true,
    execute: (input) => {
      if (room.shipped.has(input.orderId)) return failed(`order ${input.orderId} already shipped`);
      room.cancelled.add(input.orderId);
      const accepted = picklists.executions.filter(
        (e) => e.performed && e.result.outcome === "succeeded" && e.input.orderId === input.orderId,
      );
      return succeeded({ cancelled: accepted.map((e) => e.key) });
    },
    policy,
  });
  // A read: asking again under the same key is always safe, as the shop's handler says (providerDedups).
  const checks = new SimulatedProvider<ShipmentCheckInput, ShipmentCheckResult>({
    kind: EFFECT_KINDS.shipmentCheck,
    dedups: true,
    lookup: true,
    execute: (input) => readShipment(room, picklists, input),
    policy,
  });
  rooms.set(picklists, room);
  return [picklists, cancels, checks];
}

/**
 * What the warehouse answers about a picklist: shipped (with what the webhook says or would have
 * said), cancelled, accepted and waiting, or no such picklist. The simulator's shortages are always
 * delivered, so it reports none: the shipment records those it heard of before it.
 */
function readShipment(
  room: StockRoom,
  picklists: SimulatedProvider<PicklistInput>,
  input: ShipmentCheckInput,
): DefiniteResult<ShipmentCheckResult> {
  const shipment = room.shipments.get(input.picklistKey);
  if (shipment) return succeeded({ status: "shipped", shipment: { ...shipment }, adjustments: [] });
  if (room.cancelled.has(input.orderId)) return succeeded({ status: "cancelled" });
  const known = picklists.executions.some(
    (e) => e.key === input.picklistKey && e.performed && e.result.outcome === "succeeded",
  );
  return known ? succeeded({ status: "accepted" }) : failed(`no picklist under "${input.picklistKey}"`);
}

/**
 * The warehouse's answer to a shipment check the reconciliation queue holds, as an operator would
 * get it by asking the warehouse: a read has no record of its own to look up (the default operator
 * would settle a check that never reached the warehouse as "failed": the warehouse knows nothing).
 */
export function askWarehouse(
  env: { providers: SimulatedProvider[] },
  input: ShipmentCheckInput,
): DefiniteResult<ShipmentCheckResult> {
  const picklists = picklistsOf(env);
  return readShipment(rooms.get(picklists) as StockRoom, picklists, input);
}

const picklistsOf = (env: { providers: SimulatedProvider[] }) =>
  env.providers.find((p) => p.kind === EFFECT_KINDS.picklist) as SimulatedProvider<PicklistInput>;
/** The orders the warehouse shipped (for the invariants). */
export const shippedOrders = (env: { providers: SimulatedProvider[] }): ReadonlySet<string> =>
  rooms.get(picklistsOf(env))?.shipped ?? new Set();

/** Accepted picklists, first per order (later keys of an order are retries of a refused one). */
const accepted = (env: { providers: SimulatedProvider[] }) =>
  picklistsOf(env).executions.filter((e) => e.performed && e.result.outcome === "succeeded");
/** The orders the warehouse accepted a picklist of. */
export const acceptedOrders = (env: { providers: SimulatedProvider[] }): ReadonlySet<string> =>
  new Set(accepted(env).map((e) => e.input.orderId));

/**
 * Ships the picklists it accepted, unless their order was cancelled first, and calls the shop's
 * webhook until it is acknowledged; now and then it calls again for one already acknowledged (a
 * duplicate webhook). A picklist ships at a turn with even odds, so that it takes a while, as
 * picking does: a cancel can land between acceptance and shipment.
 */
export function warehouseWorker(env: SimEnv): SimWorker {
  const room = rooms.get(picklistsOf(env)) as StockRoom;
  if (!env.outside.has("warehouse:acknowledged")) env.outside.set("warehouse:acknowledged", new Set<string>());
  const acknowledged = env.outside.get("warehouse:acknowledged") as Set<string>;
  return {
    name: "warehouse",
    async runOnce() {
      let calls = 0;
      for (const execution of accepted(env)) {
        const { orderId } = execution.input;
        if (!room.shipped.has(orderId) && room.cancelled.has(orderId)) continue;
        if (!room.shipped.has(orderId) && env.random.next() < 0.5) {
          // Counted as work: a turn that put a shipment off is not a quiet world (the drain would stop).
          calls++;
          continue;
        }
        // Shipped already and its webhook lost for good: the warehouse never calls.
        if (room.lost.has(execution.key)) continue;
        const again = acknowledged.has(execution.key);
        if (again && env.random.next() > 0.1) continue;
        // The goods leave before the webhook is called: a cancel from now on is refused.
        const shipment = { type: "RecordShipment", ...ship(env, room, execution.key, orderId) };
        await env.runtime.send(shipmentAddress(orderId), shipment, {
          messageId: warehouseMessageId(shipment.eventId),
        });
        acknowledged.add(execution.key);
        calls++;
      }
      return calls;
    },
  };
}

/** The goods of an accepted picklist leave (once: the same shipment whenever asked again). */
function ship(env: SimEnv, room: StockRoom, key: string, orderId: string): CheckedShipment {
  room.shipped.add(orderId);
  const known = room.shipments.get(key);
  if (known) return known;
  const shipment = {
    eventId: `ship:${key}`,
    shipmentId: `shp_${key}`,
    occurredAt: new Date(env.clock.now()).toISOString(),
  };
  room.shipments.set(key, shipment);
  return shipment;
}

/**
 * The warehouse ships an accepted picklist and its webhook is lost for good (it gave up on its
 * retries while the shop was away): the worker never calls the shop for it. Only the shipment's
 * check can tell the shop. At a moment the seed picks: of a picklist not shipped yet (`lost`), or
 * of one shipped whose webhook the shop has not acknowledged yet (`lost-after-retries`).
 */
export const loseWebhook: SimAction = {
  name: "lose-webhook",
  async run(env, pick) {
    const room = rooms.get(picklistsOf(env)) as StockRoom;
    const acknowledged = env.outside.get("warehouse:acknowledged") as Set<string> | undefined;
    const candidates = accepted(env).filter(
      (e) =>
        !room.lost.has(e.key) &&
        !acknowledged?.has(e.key) &&
        (room.shipped.has(e.input.orderId) || !room.cancelled.has(e.input.orderId)),
    );
    const execution = candidates[pick % Math.max(1, candidates.length)];
    if (!execution) return undefined;
    const moment = room.shipments.has(execution.key) ? "lost-after-retries" : "lost";
    ship(env, room, execution.key, execution.input.orderId);
    room.lost.add(execution.key);
    return moment;
  },
};

/** The shortages the warehouse reported and saw acknowledged, by order: what the invariants hold the shop to. */
export const reportedShortages = (env: { outside: Map<string, unknown> }) => {
  if (!env.outside.has("warehouse:shortages")) {
    env.outside.set("warehouse:shortages", new Map<string, RecordLinesUnavailable>());
  }
  return env.outside.get("warehouse:shortages") as Map<string, RecordLinesUnavailable>;
};

/**
 * The warehouse finds it cannot ship some lines of a picklist it accepted, and says so through its
 * webhook (`RecordLinesUnavailable`, one adjustment per order): one whole line of several, or
 * some of the items of a single line. Never everything: the rest ships. At a moment the seed
 * picks, so before or after the shipment's webhook (webhooks arrive in any order); a report made
 * before is delivered again, as a duplicate webhook.
 */
export const shortShip: SimAction = {
  name: "short-ship",
  async run(env, pick) {
    const reported = reportedShortages(env);
    const room = rooms.get(picklistsOf(env)) as StockRoom;
    // Nothing to pick for an order whose picklists the warehouse cancelled before shipping.
    const candidates = accepted(env).filter(
      (e) =>
        e.input.lines.reduce((n, l) => n + l.quantity, 0) >= 2 &&
        (room.shipped.has(e.input.orderId) || !room.cancelled.has(e.input.orderId)),
    );
    const execution = candidates[pick % Math.max(1, candidates.length)];
    if (!execution) return undefined;
    const { orderId, lines } = execution.input;
    const previous = reported.get(orderId);
    const report: RecordLinesUnavailable = previous ?? {
      type: "RecordLinesUnavailable",
      eventId: `short:${orderId}`,
      adjustmentId: `adj-${orderId}`,
      lines: missingLines(lines, Math.floor(pick / Math.max(1, candidates.length))),
    };
    const shipped = room.shipped.has(orderId);
    await env.runtime.send(shipmentAddress(orderId), report, { messageId: warehouseMessageId(report.eventId) });
    reported.set(orderId, report);
    return previous ? "again" : shipped ? "after-shipment" : "before-shipment";
  },
};

function missingLines(lines: readonly { sku: string; quantity: number }[], pick: number) {
  if (lines.length > 1) {
    const line = lines[pick % lines.length] as { sku: string; quantity: number };
    return [{ sku: line.sku, quantity: line.quantity }];
  }
  const only = lines[0] as { sku: string; quantity: number };
  return [{ sku: only.sku, quantity: 1 + (pick % (only.quantity - 1)) }];
}
