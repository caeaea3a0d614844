import type { DecideContext, Decision, EffectOutcome, EffectRequest } from "oncely";
import { CommandRejectedError, isFinalStatus } from "oncely";
import { eventIds, type PayloadOf, SOURCES } from "../integration/events.js";
import { type CancelOrder, cancel, shipmentAfterCancel } from "./cancellation.js";
import { type OrderCommand, orderAmount, type PlaceOrder } from "./commands.js";
import {
  attemptKey,
  EFFECT_KINDS,
  EMAIL_TEMPLATES,
  type EmailInput,
  effectOfKey,
  MAX_MAIL_ATTEMPTS,
} from "./effects.js";
import { FACT_EVENTS, ORDER_EFFECT_FACTS, type OrderEffectFact, type OrderEvent } from "./events.js";
import { evolve } from "./evolve.js";
import type { IntegrationCommand } from "./integration.js";
import { dueRefunds, isRefundKey } from "./refunds.js";
import type { MailState, OrderState } from "./state.js";
import { deriveStatus } from "./status.js";

/**
 * The order's decider (Ordering context). Pure.
 *
 * - `PlaceOrder` records the order and publishes the integration event `OrderPlaced` (through the
 *   outbox, in the same commit). Payment, the fulfillment process and the views take it from there.
 * - Each integration fact (payment processed / failed / needs attention, picklist accepted, order
 *   shipped) updates one independent fact, monotonically: a late `PaymentProcessed` after
 *   `OrderShipped` only fills in the payment, it never downgrades the order (seed 2). A fact
 *   already final changes nothing, whatever eventId the repeat carries.
 * - The customer mails stay the order's own effects: the confirmation once the payment fact is
 *   Completed, the shipping mail once paid and shipped. Each only from NotRequested, so nothing
 *   starts twice; an effect Pending or Unknown is the dispatcher's, with its key. A mail that
 *   definitely failed (refused, or settled as never sent) is asked for again under a new key,
 *   `…:2`, `…:3`; after `MAX_MAIL_ATTEMPTS` it stays failed and the order needs attention.
 * - `CancelOrder` and the races it settles live in `cancellation.ts`; the refunds a cancellation or
 *   an out-of-stock answer calls for in `refunds.ts`. Both are computed by `followUps` from the
 *   state, in the same commit as the fact that calls for them.
 */
export function decide(
  command: OrderCommand | EffectOutcome,
  state: OrderState,
  context: DecideContext,
): Decision<OrderEvent> {
  switch (command.type) {
    case "PlaceOrder":
      return placeOrder(command, state, context.id);
    case "CancelOrder":
      return cancelOrder(command, state, context.id);
    case "RecordPaymentProcessed":
    case "RecordPaymentFailed":
    case "RecordPaymentNeedsAttention":
    case "RecordPicklistAccepted":
    case "RecordPicklistRejected":
    case "RecordLinesUnavailable":
    case "RecordOrderShipped":
      return recordFact(command, state, context.id);
    case "oncely.effect.succeeded":
    case "oncely.effect.failed":
    case "oncely.effect.unknown":
    case "oncely.effect.needs-reconciliation":
      return effectOutcome(command, state, context.id);
    default:
      throw new CommandRejectedError(`an order does not handle ${command.type}`);
  }
}

function placeOrder(command: PlaceOrder, state: OrderState, orderId: string): Decision<OrderEvent> {
  const amount = orderAmount(command.lines);
  if (state.details) {
    const same =
      state.details.customerEmail === command.customerEmail &&
      state.details.currency === command.currency &&
      JSON.stringify(state.details.lines) === JSON.stringify(command.lines);
    if (!same) throw new CommandRejectedError(`order ${orderId} was already placed with other details`);
    // A repeated PlaceOrder is answered from the state; OrderPlaced is not published twice.
    return { reply: summary(state) };
  }
  const placed: OrderEvent = {
    type: "OrderPlaced",
    orderId,
    customerEmail: command.customerEmail,
    currency: command.currency,
    lines: command.lines,
    amount,
  };
  const payload: PayloadOf<"OrderPlaced"> = { orderId, currency: command.currency, amount, lines: command.lines };
  const events: OrderEvent[] = [placed];
  // Facts recorded before the order (an integration event for an id placed later) may already
  // call for a mail; `followUps` starts what is due.
  const effects: EffectRequest[] = [];
  followUps(apply(state, events), orderId, events, effects);
  return {
    events,
    effects,
    publish: [
      {
        eventId: eventIds.orderPlaced(orderId),
        type: "OrderPlaced",
        source: SOURCES.ordering,
        aggregateId: orderId,
        payload,
      },
    ],
    reply: summary(apply(state, events)),
  };
}

function cancelOrder(command: CancelOrder, state: OrderState, orderId: string): Decision<OrderEvent> {
  const cancelled = cancel(command, state, orderId);
  if (!cancelled) return { reply: { ...summary(state), duplicate: true } };
  const { events, publish } = cancelled;
  const effects: EffectRequest[] = [];
  followUps(apply(state, events), orderId, events, effects);
  return { events, effects, publish, reply: summary(apply(state, events)) };
}

function recordFact(command: IntegrationCommand, state: OrderState, orderId: string): Decision<OrderEvent> {
  const event = factEvent(command, state);
  if (!event) return { reply: { ...summary(state), duplicate: true } };
  const events: OrderEvent[] = [event];
  if (event.type === "OrderShipped") events.push(...shipmentAfterCancel(state, event.shipmentId));
  const effects: EffectRequest[] = [];
  followUps(apply(state, events), orderId, events, effects);
  return { events, effects, reply: summary(apply(state, events)) };
}

/** The event recording an integration fact, or undefined when the fact is already at or past it. */
function factEvent(command: IntegrationCommand, state: OrderState): OrderEvent | undefined {
  const { eventId } = command;
  switch (command.type) {
    case "RecordPaymentProcessed":
      return isFinalStatus(state.payment.status)
        ? undefined
        : { type: "PaymentProcessed", eventId, paymentId: command.paymentId };
    case "RecordPaymentFailed":
      return isFinalStatus(state.payment.status)
        ? undefined
        : { type: "PaymentFailed", eventId, reason: command.reason };
    case "RecordPaymentNeedsAttention":
      return isFinalStatus(state.payment.status) || state.payment.needsReconciliation
        ? undefined
        : { type: "PaymentNeedsAttention", eventId, error: command.error };
    case "RecordPicklistAccepted":
      return isFinalStatus(state.picklist.status)
        ? undefined
        : { type: "PicklistAccepted", eventId, picklistId: command.picklistId };
    case "RecordPicklistRejected":
      return state.stock.rejected !== null ? undefined : { type: "PicklistRejected", eventId, reason: command.reason };
    case "RecordLinesUnavailable":
      return state.stock.shortages.some((s) => s.adjustmentId === command.adjustmentId)
        ? undefined
        : { type: "LinesUnavailable", eventId, adjustmentId: command.adjustmentId, lines: command.lines };
    case "RecordOrderShipped":
      return state.shipping.status === "Completed"
        ? undefined
        : {
            type: "OrderShipped",
            eventId: command.warehouseEventId,
            shipmentId: command.shipmentId,
            occurredAt: command.shippedAt,
            ...(command.adjustmentIds?.length ? { adjustmentIds: command.adjustmentIds } : {}),
          };
  }
}

function effectOutcome(command: EffectOutcome, state: OrderState, orderId: string): Decision<OrderEvent> {
  if (!("key" in command)) throw new CommandRejectedError(`an order does not handle ${command.type}`);
  if (isRefundKey(orderId, command.key)) return refundOutcome(command, state, orderId);
  const named = effectOfKey(orderId, command.key);
  const fact = ORDER_EFFECT_FACTS.find((f) => f === named?.fact);
  if (!named || !fact) {
    throw new CommandRejectedError(`effect key "${command.key}" does not belong to order ${orderId}`);
  }
  const current = state[fact];
  if (named.attempt > current.attempt) {
    throw new CommandRejectedError(`order ${orderId} never requested "${command.key}"`);
  }
  const names = FACT_EVENTS[fact];
  const unchanged = { reply: summary(state) };
  // An earlier attempt definitely failed before the current one was asked for: its late or
  // repeated outcomes change nothing, and are not refused either (a refusal would only make the
  // dispatcher deliver them again).
  if (named.attempt < current.attempt) return unchanged;
  // The first final outcome wins (as the runtime's inbox does with `{key}#outcome`).
  if (isFinalStatus(current.status)) return unchanged;
  let event: OrderEvent;
  switch (command.type) {
    case "oncely.effect.succeeded": {
      const messageId = (command.result as { messageId?: unknown } | null)?.messageId;
      if (typeof messageId !== "string" || messageId === "") {
        throw new CommandRejectedError(
          `outcome of "${command.key}" lacks messageId: ${JSON.stringify(command.result)}`,
        );
      }
      event = { type: names.completed, key: command.key, messageId, via: command.via };
      break;
    }
    case "oncely.effect.failed":
      event = { type: names.failed, key: command.key, reason: command.error, via: command.via };
      break;
    case "oncely.effect.unknown":
      // Each further Unknown attempt is already kept by the runtime's inbox; the fact moves only once.
      if (current.status === "Unknown") return unchanged;
      event = { type: names.unknown, key: command.key, error: command.error, attempt: command.attempt };
      break;
    case "oncely.effect.needs-reconciliation":
      if (current.needsReconciliation) return unchanged;
      event = { type: names.reconcile, key: command.key, error: command.error };
      break;
  }
  const events: OrderEvent[] = [event];
  // A definite failure asks for the mail again under a new key, in this same commit, so no crash
  // can leave a failed mail with attempts left and nothing pending.
  const effects: EffectRequest[] = [];
  followUps(apply(state, events), orderId, events, effects);
  return { events, effects, reply: summary(apply(state, events)) };
}

/** An outcome of one of the order's refunds: the first final outcome of its key wins. */
function refundOutcome(
  command: EffectOutcome & { key: string },
  state: OrderState,
  orderId: string,
): Decision<OrderEvent> {
  const refund = state.refunds.find((r) => r.key === command.key);
  if (!refund) throw new CommandRejectedError(`order ${orderId} never requested "${command.key}"`);
  const unchanged = { reply: summary(state) };
  if (isFinalStatus(refund.status)) return unchanged;
  const { key } = command;
  let event: OrderEvent;
  switch (command.type) {
    case "oncely.effect.succeeded": {
      const refundId = (command.result as { refundId?: unknown } | null)?.refundId;
      if (typeof refundId !== "string" || refundId === "") {
        throw new CommandRejectedError(`outcome of "${key}" lacks refundId: ${JSON.stringify(command.result)}`);
      }
      event = { type: "RefundCompleted", key, refundId, via: command.via };
      break;
    }
    case "oncely.effect.failed":
      // Definitely not refunded (refused, or no record at the provider): asked again under a new key
      // in this same commit (`dueRefunds`), a bounded number of times, then the order needs attention.
      event = { type: "RefundFailed", key, reason: command.error, via: command.via };
      break;
    case "oncely.effect.unknown":
      if (refund.status === "Unknown") return unchanged;
      event = { type: "RefundUnknown", key, error: command.error, attempt: command.attempt };
      break;
    case "oncely.effect.needs-reconciliation":
      if (refund.needsReconciliation) return unchanged;
      event = { type: "RefundNeedsReconciliation", key, error: command.error };
      break;
    default:
      throw new CommandRejectedError(`an order does not handle ${(command as { type: string }).type}`);
  }
  const events: OrderEvent[] = [event];
  const effects: EffectRequest[] = [];
  followUps(apply(state, events), orderId, events, effects);
  return { events, effects, reply: summary(apply(state, events)) };
}

/**
 * The attempt a mail is due for: the first while never asked for, the next one after a definite
 * failure with attempts left; undefined while one is pending or unknown, once sent, and after the
 * last attempt failed.
 */
function dueAttempt(mail: MailState): number | undefined {
  if (mail.status === "NotRequested") return 1;
  if (mail.status === "Failed" && mail.attempt < MAX_MAIL_ATTEMPTS) return mail.attempt + 1;
  return undefined;
}

/**
 * The mails a state calls for: the confirmation once paid, the shipping mail once paid and shipped,
 * and a mail that definitely failed again under a new key (at most `MAX_MAIL_ATTEMPTS` in all).
 * Each only from NotRequested or Failed, so calling this again never starts anything twice; a
 * failed or not yet processed payment starts no mail.
 */
function followUps(state: OrderState, orderId: string, events: OrderEvent[], effects: EffectRequest[]): void {
  const details = state.details;
  if (!details) return;
  const mail = (fact: OrderEffectFact, template: string) => {
    const attempt = dueAttempt(state[fact]);
    if (attempt === undefined) return;
    const key = attemptKey(orderId, fact, attempt);
    // Attempt 1 is written without `attempt`, as every request was before mails were asked for again.
    events.push({
      type: FACT_EVENTS[fact].requested,
      key,
      to: details.customerEmail,
      ...(attempt > 1 ? { attempt } : {}),
    } as OrderEvent);
    const input: EmailInput = { to: details.customerEmail, template, orderId };
    effects.push({ kind: EFFECT_KINDS.email, key, input });
  };
  // A cancelled order gets its cancellation mail whatever its payment did, and no mail about a
  // purchase or shipment it no longer has (one already asked for before the cancellation goes on).
  if (state.cancellation) mail("cancellationEmail", EMAIL_TEMPLATES.cancellation);
  if (state.payment.status !== "Completed") return;
  dueRefunds(state, orderId, events, effects);
  const stockProblem = state.stock.rejected !== null || state.stock.shortages.length > 0;
  if (stockProblem) mail("stockEmail", EMAIL_TEMPLATES.stock);
  if (state.cancellation) return;
  mail("confirmationEmail", EMAIL_TEMPLATES.confirmation);
  if (state.shipping.status === "Completed") mail("shippingEmail", EMAIL_TEMPLATES.shipping);
}

const apply = (state: OrderState, events: OrderEvent[]) => events.reduce(evolve, state);

/** The reply: the derived status and the stored ids (the "stored result" of the seed). */
export function summary(state: OrderState) {
  return {
    orderId: state.orderId,
    status: deriveStatus(state) ?? null,
    paymentId: state.payment.resultId,
    picklistId: state.picklist.resultId,
    shipmentId: state.shipping.shipmentId,
  };
}
