import { failed, succeeded } from "oncely";
import type { SimAction, SimEnv, SimWorker } from "oncely/testing";
import { SimulatedProvider } from "oncely/testing";
import {
  EFFECT_KINDS,
  type PicklistCancelInput,
  type PicklistCancelResult,
  type PicklistInput,
} from "../ordering/effects.js";
import {
  type RecordLinesUnavailable,
  type RecordShipment,
  shipmentAddress,
  warehouseMessageId,
} from "../shipping/actor.js";

/**
 * The simulated warehouse: two providers (picklists and their cancellation) sharing one stock
 * room, a worker that ships what was accepted and calls the shop's webhook, and the `short-ship`
 * action, by which it reports lines of an accepted picklist it cannot ship.
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
}
/** The stock room of a run, found from its picklist provider (providers are made once per run). */
const rooms = new WeakMap<SimulatedProvider<PicklistInput>, StockRoom>();

const policy = { timeoutMs: 2_000, leaseMs: 10_000, rerunAfterNotFoundMs: 120_000, lookupAttempts: 4 };

export function warehouseProviders(dedups: (kind: string) => boolean) {
  const room: StockRoom = { shipped: new Set(), cancelled: new Set() };
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
  rooms.set(picklists, room);
  return [picklists, cancels];
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
  // A webhook called again carries the body it was first called with: the same eventId with
  // another body is a conflict the shop refuses (409), not a duplicate.
  if (!env.outside.has("warehouse:shipments")) env.outside.set("warehouse:shipments", new Map<string, unknown>());
  const shipments = env.outside.get("warehouse:shipments") as Map<string, RecordShipment>;
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
        const again = acknowledged.has(execution.key);
        if (again && env.random.next() > 0.1) continue;
        // The goods leave before the webhook is called: a cancel from now on is refused.
        room.shipped.add(orderId);
        const shipment: RecordShipment = shipments.get(execution.key) ?? {
          type: "RecordShipment",
          eventId: `ship:${execution.key}`,
          shipmentId: `shp_${execution.key}`,
          occurredAt: new Date(env.clock.now()).toISOString(),
        };
        shipments.set(execution.key, shipment);
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
