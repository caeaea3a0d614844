import { effectStatusAfter, isFinalStatus } from "../../../src/effects/status.js";
import { EVENT_STAGE, type OrderEvent, type Stage } from "./events.js";
import type { EffectFactState, OrderState } from "./state.js";

/**
 * Applies one event. Pure, and monotonic by construction: every status change goes through
 * `effectStatusAfter`, so a replayed or reordered event can never move a fact backwards, and
 * the first final outcome of an effect (its id, its reason) is never overwritten.
 */
export function evolve(state: OrderState, event: OrderEvent): OrderState {
  switch (event.type) {
    case "OrderPlaced":
      if (state.details) return state;
      return {
        ...state,
        details: {
          customerEmail: event.customerEmail,
          currency: event.currency,
          lines: event.lines,
          amount: event.amount,
        },
      };
    case "OrderShipped":
      if (state.shipping.status === "Completed") return state;
      return {
        ...state,
        shipping: {
          status: effectStatusAfter(state.shipping.status, "Completed"),
          shipmentId: event.shipmentId,
          eventId: event.eventId,
          occurredAt: event.occurredAt,
        },
      };
  }
  const staged = EVENT_STAGE.get(event.type);
  if (!staged) return state;
  return { ...state, [staged.fact]: applyStage(state[staged.fact], staged.stage, event) };
}

function applyStage(fact: EffectFactState, stage: Stage, event: OrderEvent): EffectFactState {
  if (isFinalStatus(fact.status)) return fact;
  switch (stage) {
    case "requested":
      return { ...fact, status: effectStatusAfter(fact.status, "Pending") };
    case "completed":
      return {
        ...fact,
        status: "Completed",
        resultId: resultIdOf(event),
        lastError: null,
        needsReconciliation: false,
      };
    case "failed":
      return {
        ...fact,
        status: "Failed",
        reason: "reason" in event ? event.reason : null,
        needsReconciliation: false,
      };
    case "unknown":
      return { ...fact, status: effectStatusAfter(fact.status, "Unknown"), lastError: errorOf(event) };
    case "reconcile":
      return {
        ...fact,
        status: effectStatusAfter(fact.status, "Unknown"),
        lastError: errorOf(event),
        needsReconciliation: true,
      };
  }
}

const resultIdOf = (event: OrderEvent): string | null => {
  if ("paymentId" in event) return event.paymentId;
  if ("messageId" in event) return event.messageId;
  if ("picklistId" in event) return event.picklistId;
  return null;
};

const errorOf = (event: OrderEvent): string | null => ("error" in event ? event.error : null);
