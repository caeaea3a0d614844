import { effectStatusAfter, isFinalStatus } from "oncely";
import { EVENT_STAGE, ORDER_EFFECT_FACTS, type OrderEffectFact, type OrderEvent, type Stage } from "./events.js";
import { applyStage } from "./fact-stage.js";
import { applyRefund, REFUND_STAGE } from "./refunds.js";
import { type MailState, mailNotRequested, type OrderState } from "./state.js";

/**
 * Applies one event. Pure, and monotonic by construction: every status change goes through
 * `effectStatusAfter` or stops at a final status, so a replayed, duplicated or reordered event
 * can never move a fact backwards, and the first final outcome of a fact (its id, its reason) is
 * never overwritten. The payment and picklist facts come from other contexts' integration events;
 * the two mails are the order's own effects, monotonic within each attempt: a mail that definitely
 * failed may be asked for again under a new key, which starts a new attempt at Pending.
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
        // Placed means the payment is expected: Payment hears of the order through OrderPlaced.
        payment: { ...state.payment, status: effectStatusAfter(state.payment.status, "Pending") },
      };
    case "PaymentProcessed":
      if (isFinalStatus(state.payment.status)) return state;
      return {
        ...state,
        payment: {
          ...state.payment,
          status: "Completed",
          resultId: event.paymentId,
          lastError: null,
          needsReconciliation: false,
        },
      };
    case "PaymentFailed":
      if (isFinalStatus(state.payment.status)) return state;
      return {
        ...state,
        // A final fact keeps no pending error: the same facts in any order give the same state.
        payment: {
          ...state.payment,
          status: "Failed",
          reason: event.reason,
          lastError: null,
          needsReconciliation: false,
        },
      };
    case "PaymentNeedsAttention":
      if (isFinalStatus(state.payment.status)) return state;
      return {
        ...state,
        payment: {
          ...state.payment,
          status: effectStatusAfter(state.payment.status, "Unknown"),
          lastError: event.error,
          needsReconciliation: true,
        },
      };
    case "PicklistAccepted":
      if (isFinalStatus(state.picklist.status)) return state;
      return { ...state, picklist: { ...state.picklist, status: "Completed", resultId: event.picklistId } };
    case "OrderShipped":
      if (state.shipping.status === "Completed") return state;
      return {
        ...state,
        shipping: {
          status: effectStatusAfter(state.shipping.status, "Completed"),
          shipmentId: event.shipmentId,
          eventId: event.eventId,
          occurredAt: event.occurredAt,
          adjustmentIds: event.adjustmentIds ?? [],
        },
      };
    case "OrderCancelled":
      if (state.cancellation) return state;
      return {
        ...state,
        cancellation: { reason: event.reason, paymentStatus: event.paymentStatus, shippedBeforeCancel: false },
      };
    case "ShippedBeforeCancel":
      if (!state.cancellation) return state;
      return { ...state, cancellation: { ...state.cancellation, shippedBeforeCancel: true } };
    case "PicklistRejected":
      if (state.stock.rejected !== null) return state;
      return { ...state, stock: { ...state.stock, rejected: event.reason } };
    case "LinesUnavailable":
      if (state.stock.shortages.some((s) => s.adjustmentId === event.adjustmentId)) return state;
      return {
        ...state,
        stock: {
          ...state.stock,
          shortages: [...state.stock.shortages, { adjustmentId: event.adjustmentId, lines: event.lines }],
        },
      };
  }
  const refundStage = REFUND_STAGE.get(event.type);
  if (refundStage) return { ...state, refunds: applyRefund(state.refunds, refundStage, event) };
  const staged = EVENT_STAGE.get(event.type);
  if (!staged || !(ORDER_EFFECT_FACTS as readonly string[]).includes(staged.fact)) return state;
  const fact = staged.fact as OrderEffectFact;
  return { ...state, [fact]: applyMail(state[fact], staged.stage, event) };
}

function applyMail(mail: MailState, stage: Stage, event: OrderEvent): MailState {
  const key = "key" in event ? event.key : null;
  if (stage === "requested") {
    const attempt = "attempt" in event && event.attempt !== undefined ? event.attempt : 1;
    // The same request again, or an older one: nothing new.
    if (attempt <= mail.attempt) return mail;
    // A new attempt only replaces one that never started or definitely failed (decide asks for
    // nothing else); it starts afresh at Pending under its own key.
    if (mail.status !== "NotRequested" && mail.status !== "Failed") return mail;
    return { ...mailNotRequested(), key, attempt, status: "Pending" };
  }
  // An outcome belongs to one attempt: one of an earlier attempt's key changes nothing.
  if (key !== mail.key) return mail;
  return { ...mail, ...applyStage(mail, stage, event) };
}
