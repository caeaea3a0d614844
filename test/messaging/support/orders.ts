import { defineActor } from "../../../src/core/actor.js";
import type { Envelope } from "../../../src/messaging/envelope.js";
import { derived, monotonic } from "../../../src/messaging/facts.js";
import { defineProjection } from "../../../src/messaging/projection.js";

/**
 * A small order-like example for the messaging tests: each order's producer stream publishes up to
 * five events in this order, with aggregateVersion 1..5.
 */
export const LIFECYCLE = [
  "OrderPlaced",
  "PaymentProcessed",
  "ShippingReady",
  "OrderShipped",
  "OrderDelivered",
] as const;
export type LifecycleEvent = (typeof LIFECYCLE)[number];

export function orderEvent(orderId: string, version: number, source = "orders"): Envelope {
  const type = LIFECYCLE[version - 1] as LifecycleEvent;
  const eventId = `${orderId}:${type}`;
  return {
    eventId,
    type,
    source,
    aggregateId: orderId,
    aggregateVersion: version,
    // Deliberately decreasing with version: ordering must never read it.
    occurredAt: new Date(Date.UTC(2026, 0, 1) - version * 1000).toISOString(),
    correlationId: orderId,
    causationId: eventId,
    payload: { orderId, amount: 42 },
  };
}

/** All events of orders `o1..oN`, order i having `lengths[i]` events, in production order. */
export function orderEvents(lengths: readonly number[]): Envelope[] {
  return lengths.flatMap((length, i) => Array.from({ length }, (_, v) => orderEvent(`o${i + 1}`, v + 1)));
}

export const paymentFact = monotonic(["Pending", "Processed"] as const, "payment");
export const shippingFact = monotonic(["NotReady", "Ready", "Shipped", "Delivered"] as const, "shipping");

export interface OrderFacts {
  placed: boolean;
  payment: "Pending" | "Processed";
  shipping: "NotReady" | "Ready" | "Shipped" | "Delivered";
  /** Counts applications: a duplicate applied twice would show. */
  applied: number;
}

export const orderStatus = derived<OrderFacts, "Delivered" | "Shipped" | "Paid" | "Placed" | "Unknown">(
  [
    ["Delivered", (f) => f.shipping === "Delivered"],
    ["Shipped", (f) => f.shipping === "Shipped"],
    ["Paid", (f) => f.payment === "Processed"],
    ["Placed", (f) => f.placed],
  ],
  "Unknown",
);

/** Facts projection: independent monotonic facts, status derived at query time. */
export const orderFacts = defineProjection<OrderFacts, OrderFacts & { status: string }>({
  collection: "order-facts",
  key: (e) => e.aggregateId,
  project(doc, e, tools) {
    const facts: OrderFacts = doc ?? { placed: false, payment: "Pending", shipping: "NotReady", applied: 0 };
    const next = { ...facts, applied: facts.applied + 1 };
    switch (e.type) {
      case "OrderPlaced":
        next.placed = true;
        break;
      case "PaymentProcessed":
        next.payment = tools.advance("payment", paymentFact, facts.payment, "Processed").value;
        break;
      case "ShippingReady":
        next.shipping = tools.advance("shipping", shippingFact, facts.shipping, "Ready").value;
        break;
      case "OrderShipped":
        next.shipping = tools.advance("shipping", shippingFact, facts.shipping, "Shipped").value;
        break;
      case "OrderDelivered":
        next.shipping = tools.advance("shipping", shippingFact, facts.shipping, "Delivered").value;
        break;
    }
    return next;
  },
  view: (doc) => ({ ...doc, status: orderStatus(doc) }),
});

/** Sequenced projection: a timeline that is only right if events are applied in version order, once. */
export const orderTimeline = defineProjection<{ timeline: string[] }>({
  collection: "order-timeline",
  key: (e) => e.aggregateId,
  project: (doc, e) => ({ timeline: [...(doc?.timeline ?? []), `${e.aggregateVersion}:${e.type}`] }),
});

/** A counter per event: `count` above 1 means an event was applied twice. */
export const perEventCount = defineProjection<{ count: number; type: string }>({
  collection: "per-event",
  key: (e) => e.eventId,
  project: (doc, e) => ({ count: (doc?.count ?? 0) + 1, type: e.type }),
});

/** A producing actor: each `Record` appends one event and publishes it with the stream version. */
export const producer = defineActor<{ recorded: string[] }, { type: "Record"; event: string }, { type: string }>({
  type: "producer",
  initialState: () => ({ recorded: [] }),
  evolve: (s, e) => ({ recorded: [...s.recorded, e.type] }),
  decide(command, _state, ctx) {
    if (command.type !== "Record") return {};
    return {
      events: [{ type: command.event }],
      publish: [
        {
          eventId: `${ctx.id}:${ctx.version + 1}:${command.event}`,
          type: command.event,
          source: "orders",
          aggregateId: ctx.id,
          aggregateVersion: ctx.version + 1,
          payload: { n: ctx.version + 1 },
        },
      ],
    };
  },
});
