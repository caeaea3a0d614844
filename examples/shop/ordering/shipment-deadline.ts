import { type ActorDefinition, deadline, type EffectOutcome, type TimerFired } from "oncely";
import type { OrderCommand } from "./commands.js";
import type { OrderEvent } from "./events.js";
import type { OrderState } from "./state.js";

/**
 * The shipment deadline: when the warehouse accepts an order's picklist, the order asks for a
 * durable timer; if it fires before `OrderShipped` was recorded, the order records
 * `ShipmentDeadlineMissed` and needs attention ("no shipment within …"), which the status, the
 * views and `oncely_deadline_missed_total{actor_type="order",deadline="shipment"}` show. A late
 * `OrderShipped` still lands and clears it: the reason holds only while the shipment is missing.
 * Nothing is ever cancelled: a timer that fires after the shipment changes nothing. A cancelled
 * order expects no shipment (the warehouse was asked to cancel the picklist): its timer records
 * nothing, and a miss recorded before the cancellation no longer calls for attention. (The shop's
 * simulator found the order that was cancelled after its picklist was accepted ending in attention.)
 *
 * Kept apart from the order's decider, which it wraps, so the order's own rules stay as they are.
 */

export const SHIPMENT_DEADLINE = "shipment";

/** How long after `PicklistAccepted` a shipment may take before the order needs attention (15 min). */
export const DEFAULT_SHIPMENT_DEADLINE_MS = 15 * 60_000;

export const shipmentDeadlineKey = (orderId: string): string => `order:${orderId}:shipment-deadline`;

export interface ShipmentDeadlineMissed {
  type: "ShipmentDeadlineMissed";
  /** When the shipment was due (epoch ms). */
  dueAt: number;
  reason: string;
}

export type OrderEventWithDeadline = OrderEvent | ShipmentDeadlineMissed;

/** The order's state plus the missed deadline, if any (absent in orders recorded before it existed). */
export type OrderStateWithDeadline = OrderState & { shipmentOverdue?: { dueAt: number; reason: string } };

/** The attention reason of a missed shipment deadline, while the shipment is still missing. */
export function shipmentDeadlineReasons(state: OrderState): string[] {
  const overdue = (state as OrderStateWithDeadline).shipmentOverdue;
  return overdue && state.shipping.status !== "Completed" && !state.cancellation ? [overdue.reason] : [];
}

type OrderActor = ActorDefinition<OrderState, OrderCommand | EffectOutcome, OrderEvent>;
export type OrderActorWithDeadline = ActorDefinition<
  OrderStateWithDeadline,
  OrderCommand | EffectOutcome | TimerFired,
  OrderEventWithDeadline
>;

/** The order actor with a shipment deadline of `withinMs` after `PicklistAccepted`. */
export function withShipmentDeadline(order: OrderActor, withinMs: number): OrderActorWithDeadline {
  if (!Number.isFinite(withinMs) || withinMs <= 0) {
    throw new RangeError(`the shipment deadline must be a positive number of ms, got ${withinMs}`);
  }
  const { events: schemas, ...base } = order;
  // Declared event schemas would have to name ShipmentDeadlineMissed too: the order declares none.
  if (schemas)
    throw new TypeError("withShipmentDeadline: the order's event schemas must include ShipmentDeadlineMissed");
  return {
    ...base,
    evolve(state, event) {
      if (event.type === "ShipmentDeadlineMissed") {
        return { ...state, shipmentOverdue: { dueAt: event.dueAt, reason: event.reason } };
      }
      return { ...state, ...order.evolve(state, event) };
    },
    decide(command: OrderCommand | EffectOutcome | TimerFired, state, context) {
      if (command.type === "oncely.timer.fired") return shipmentDeadlineFired(command, state, withinMs);
      const decision = order.decide(command, state, context);
      if (!decision.events?.some((e) => e.type === "PicklistAccepted")) return decision;
      // Asked in the commit that records the acceptance; a retried decision asks with the same key.
      const timer = deadline({
        name: SHIPMENT_DEADLINE,
        key: shipmentDeadlineKey(context.id),
        at: context.now + withinMs,
        payload: { orderId: context.id },
      });
      return { ...decision, effects: [...(decision.effects ?? []), timer] };
    },
  };
}

/** The state decides: a shipment recorded, or a deadline already missed, means nothing to do. */
function shipmentDeadlineFired(command: TimerFired, state: OrderStateWithDeadline, withinMs: number) {
  if (command.name !== SHIPMENT_DEADLINE) return {};
  if (state.shipping.status === "Completed" || state.shipmentOverdue || state.cancellation) return {};
  const missed: ShipmentDeadlineMissed = {
    type: "ShipmentDeadlineMissed",
    dueAt: command.dueAt,
    reason: `no shipment within ${withinMs} ms of the picklist's acceptance (due ${new Date(command.dueAt).toISOString()})`,
  };
  return { events: [missed] };
}
