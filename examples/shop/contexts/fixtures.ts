import type { ActorDefinition, Decision, Envelope, Typed } from "oncely";
import { given } from "oncely/testing";

/** The order every context test is about. */
export const id = "42";

/** The decision itself (given/when/then answers with assertions; these tests read the decision's parts). */
export function decide<E extends Typed>(
  // biome-ignore lint/suspicious/noExplicitAny: any actor of the shop
  actor: ActorDefinition<any, any, E, any>,
  events: E[],
  command: Typed,
): Decision<E> {
  const { state } = given(actor, events, { id });
  return actor.decide(command, state, {
    address: `${actor.type}/${id}`,
    id,
    now: 0,
    messageId: undefined,
    version: events.length,
  });
}

/** An integration event about order `orderId` (default the test's), as a producer would publish it. */
export const envelope = (type: string, source: string, version: number, payload: object, orderId = id): Envelope => ({
  eventId: `${source}:${orderId}:${type}`,
  type,
  source,
  aggregateId: orderId,
  aggregateVersion: version,
  occurredAt: "2026-01-01T00:00:00.000Z",
  correlationId: orderId,
  causationId: "c",
  payload,
});

export const placed = envelope("OrderPlaced", "ordering", 1, {
  orderId: id,
  currency: "EUR",
  amount: 2500,
  lines: [{ sku: "book", quantity: 2, unitPrice: 1250 }],
});
export const processed = envelope("PaymentProcessed", "payment", 1, {
  orderId: id,
  paymentId: "pay_1",
  amount: 2500,
  currency: "EUR",
});
