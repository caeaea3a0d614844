import type { CommandHandler, DecideContext, Decision, EffectStatus, OutcomeOf, PublishRequest } from "oncely";
import { CommandRejectedError, defineActor, effectStatusAfter, isFinalStatus } from "oncely";
import { paymentEffect } from "../effects/declarations.js";
import { eventIds, type PayloadOf, payloadOf, SOURCES } from "../integration/events.js";
import { effectKey } from "../ordering/effects.js";

/**
 * The Payment context: the actor `payment/{orderId}` owns the payment provider. It hears of an
 * order only through the integration event `OrderPlaced` and answers only through integration
 * events (`PaymentProcessed`, `PaymentFailed`, `PaymentNeedsAttention`), published through the
 * outbox in the same commit as the fact they announce, so none is lost and none leaves before
 * its fact is durable.
 *
 * The charge is the effect `order:{orderId}:payment` (the key predates the split, so a provider
 * ledger stays readable across it), run by the same HTTP handler as before.
 */

export interface RequestPayment {
  type: "RequestPayment";
  orderId: string;
  amount: number;
  currency: string;
}
export type PaymentCommand = RequestPayment;

type Via = "run" | "lookup" | "operator";
export type PaymentEvent =
  | { type: "PaymentRequested"; key: string; orderId: string; amount: number; currency: string }
  | { type: "PaymentCompleted"; key: string; paymentId: string; via: Via }
  | { type: "PaymentFailed"; key: string; reason: string; via: Via }
  | { type: "PaymentUnknown"; key: string; error: string; attempt: number }
  | { type: "PaymentNeedsReconciliation"; key: string; error: string };

export interface PaymentState {
  orderId: string;
  request: { amount: number; currency: string } | null;
  status: EffectStatus;
  paymentId: string | null;
  reason: string | null;
  lastError: string | null;
  needsReconciliation: boolean;
}

export const initialPaymentState = (orderId: string): PaymentState => ({
  orderId,
  request: null,
  status: "NotRequested",
  paymentId: null,
  reason: null,
  lastError: null,
  needsReconciliation: false,
});

/** Pure and monotonic: statuses only move through `effectStatusAfter`; a final outcome is never overwritten. */
export function evolvePayment(state: PaymentState, event: PaymentEvent): PaymentState {
  switch (event.type) {
    case "PaymentRequested":
      if (state.request) return state;
      return {
        ...state,
        request: { amount: event.amount, currency: event.currency },
        status: effectStatusAfter(state.status, "Pending"),
      };
    case "PaymentCompleted":
      if (isFinalStatus(state.status)) return state;
      return {
        ...state,
        status: "Completed",
        paymentId: event.paymentId,
        lastError: null,
        needsReconciliation: false,
      };
    case "PaymentFailed":
      if (isFinalStatus(state.status)) return state;
      return {
        ...state,
        status: "Failed",
        reason: event.reason,
        needsReconciliation: false,
      };
    case "PaymentUnknown":
      return { ...state, status: effectStatusAfter(state.status, "Unknown"), lastError: event.error };
    case "PaymentNeedsReconciliation":
      if (isFinalStatus(state.status) || state.needsReconciliation) return state;
      return {
        ...state,
        status: effectStatusAfter(state.status, "Unknown"),
        lastError: event.error,
        needsReconciliation: true,
      };
  }
}

const publish = (
  state: PaymentState,
  type: "PaymentProcessed" | "PaymentFailed" | "PaymentNeedsAttention",
  eventId: string,
  payload: unknown,
): PublishRequest => ({
  eventId,
  type,
  source: SOURCES.payment,
  aggregateId: state.orderId,
  payload,
});

/** What `payment/{orderId}` decides on: its request, and the outcomes of the one effect it asks for. */
export type PaymentActorCommand = PaymentCommand | OutcomeOf<typeof paymentEffect>;

export function decidePayment(
  command: PaymentActorCommand,
  state: PaymentState,
  context: DecideContext,
): Decision<PaymentEvent> {
  const orderId = context.id;
  const key = effectKey(orderId, "payment");
  if (command.type === "RequestPayment") {
    if (command.orderId !== orderId)
      throw new CommandRejectedError(`payment ${orderId} got a request for ${command.orderId}`);
    if (state.request) {
      if (state.request.amount !== command.amount || state.request.currency !== command.currency) {
        throw new CommandRejectedError(`payment for order ${orderId} was already requested with another amount`);
      }
      // The same order announced again (another eventId for one fact): the charge is not asked for twice.
      return { reply: paymentSummary(state) };
    }
    const event: PaymentEvent = {
      type: "PaymentRequested",
      key,
      orderId,
      amount: command.amount,
      currency: command.currency,
    };
    return {
      events: [event],
      effects: [paymentEffect.request(key, { orderId, amount: command.amount, currency: command.currency })],
      reply: paymentSummary(evolvePayment(state, event)),
    };
  }
  if (command.key !== key) {
    throw new CommandRejectedError(`payment ${orderId} does not handle ${command.type}`);
  }
  if (state.status === "NotRequested") throw new CommandRejectedError(`payment ${orderId} was never requested`);
  const unchanged = { reply: paymentSummary(state) };
  // The first final outcome wins; later outcomes, duplicates and stragglers change nothing.
  if (isFinalStatus(state.status)) return unchanged;
  switch (command.type) {
    case "oncely.effect.succeeded": {
      // Typed and checked by the effect's result schema before it got here; the amount charged is the input's.
      const { paymentId } = command.result;
      const { amount, currency } = command.input;
      const payload: PayloadOf<"PaymentProcessed"> = { orderId, paymentId, amount, currency };
      const event: PaymentEvent = { type: "PaymentCompleted", key, paymentId, via: command.via };
      return {
        events: [event],
        publish: [publish(state, "PaymentProcessed", eventIds.paymentProcessed(orderId), payload)],
        reply: paymentSummary(evolvePayment(state, event)),
      };
    }
    case "oncely.effect.failed": {
      const payload: PayloadOf<"PaymentFailed"> = { orderId, reason: command.error };
      const event: PaymentEvent = { type: "PaymentFailed", key, reason: command.error, via: command.via };
      return {
        events: [event],
        publish: [publish(state, "PaymentFailed", eventIds.paymentFailed(orderId), payload)],
        reply: paymentSummary(evolvePayment(state, event)),
      };
    }
    case "oncely.effect.unknown": {
      // Each further Unknown attempt is already kept by the runtime's inbox; the fact moves only once.
      if (state.status === "Unknown") return unchanged;
      const event: PaymentEvent = { type: "PaymentUnknown", key, error: command.error, attempt: command.attempt };
      return { events: [event], reply: paymentSummary(evolvePayment(state, event)) };
    }
    case "oncely.effect.needs-reconciliation": {
      if (state.needsReconciliation) return unchanged;
      const payload: PayloadOf<"PaymentNeedsAttention"> = { orderId, error: command.error };
      const event: PaymentEvent = { type: "PaymentNeedsReconciliation", key, error: command.error };
      return {
        events: [event],
        publish: [publish(state, "PaymentNeedsAttention", eventIds.paymentNeedsAttention(orderId), payload)],
        reply: paymentSummary(evolvePayment(state, event)),
      };
    }
  }
}

export const paymentSummary = (state: PaymentState) => ({
  orderId: state.orderId,
  status: state.status,
  paymentId: state.paymentId,
  needsReconciliation: state.needsReconciliation,
});

/** `payment/{orderId}`. No `onRecovered`: the charge sits in the outbox; the dispatcher carries on with its key. */
export const paymentActor = defineActor<PaymentState, PaymentCommand, PaymentEvent, typeof paymentEffect>({
  type: "payment",
  effects: [paymentEffect],
  initialState: initialPaymentState,
  evolve: evolvePayment,
  decide: decidePayment,
  snapshot: { every: 50, schemaVersion: 1 },
});

export const paymentAddress = (orderId: string) => `payment/${orderId}`;

/** Consumer handler of the Payment context: `OrderPlaced` → `RequestPayment` to `payment/{orderId}` (messageId = eventId). */
export const paymentRoute: CommandHandler = {
  kind: "command",
  route(envelope) {
    if (envelope.type !== "OrderPlaced") return undefined;
    const placed = payloadOf(envelope, "OrderPlaced");
    const command: RequestPayment = {
      type: "RequestPayment",
      orderId: placed.orderId,
      amount: placed.amount,
      currency: placed.currency,
    };
    // The order's placement starts its payment: no read of an actor that has no events yet.
    return { address: paymentAddress(placed.orderId), command, expectNew: true };
  },
};

/** Event types the Payment context consumes. */
export const PAYMENT_CONSUMES = ["OrderPlaced"] as const;
