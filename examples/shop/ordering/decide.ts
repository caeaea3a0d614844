import type { DecideContext, Decision, EffectOutcome, EffectRequest } from "../../../src/core/decider.js";
import { CommandRejectedError } from "../../../src/core/errors.js";
import { isFinalStatus } from "../../../src/effects/status.js";
import { type OrderCommand, orderAmount, type PlaceOrder, type RecordShipment } from "./commands.js";
import {
  EFFECT_KINDS,
  type EffectFact,
  EMAIL_TEMPLATES,
  type EmailInput,
  effectKey,
  factOfKey,
  type PaymentInput,
  type PicklistInput,
} from "./effects.js";
import { FACT_EVENTS, type OrderEvent } from "./events.js";
import { evolve } from "./evolve.js";
import type { OrderState } from "./state.js";
import { deriveStatus } from "./status.js";

/**
 * The order's decider: a process manager for payment → confirmation mail + picklist → shipment
 * → shipping mail. Pure. Two rules from the seed hold for every effect:
 * - an effect already Completed is never started again; its stored result is the reply;
 * - an effect Pending or Unknown is never started again either: the dispatcher owns it, with its key.
 * The first final outcome of an effect wins (as the runtime's inbox does with `{key}#outcome`);
 * later outcomes, duplicates and stragglers change nothing.
 */
export function decide(
  command: OrderCommand | EffectOutcome,
  state: OrderState,
  context: DecideContext,
): Decision<OrderEvent> {
  switch (command.type) {
    case "PlaceOrder":
      return placeOrder(command, state, context.id);
    case "RecordShipment":
      return recordShipment(command, state, context.id);
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
    // A repeated PlaceOrder is answered from the state; the payment is not asked for twice.
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
  const key = effectKey(orderId, "payment");
  const input: PaymentInput = { orderId, amount, currency: command.currency };
  const events: OrderEvent[] = [placed, { type: "PaymentRequested", key, amount, currency: command.currency }];
  return {
    events,
    effects: [{ kind: EFFECT_KINDS.payment, key, input }],
    reply: summary(apply(state, events)),
  };
}

function recordShipment(command: RecordShipment, state: OrderState, orderId: string): Decision<OrderEvent> {
  if (state.shipping.status === "Completed") {
    // A second webhook (same or another eventId) for a shipped order changes nothing.
    return { reply: { ...summary(state), duplicate: true } };
  }
  const events: OrderEvent[] = [
    {
      type: "OrderShipped",
      eventId: command.eventId,
      shipmentId: command.shipmentId,
      occurredAt: command.occurredAt,
    },
  ];
  const effects: EffectRequest[] = [];
  // The shipping mail needs a paid order with an address; if the payment outcome is still on its way,
  // its arrival starts the mail instead (see `followUps`).
  followUps(apply(state, events), orderId, events, effects);
  return { events, effects, reply: summary(apply(state, events)) };
}

function effectOutcome(command: EffectOutcome, state: OrderState, orderId: string): Decision<OrderEvent> {
  if (!("key" in command)) throw new CommandRejectedError(`an order does not handle ${command.type}`);
  const fact = factOfKey(orderId, command.key);
  if (!fact) throw new CommandRejectedError(`effect key "${command.key}" does not belong to order ${orderId}`);
  const current = state[fact];
  if (current.status === "NotRequested") {
    throw new CommandRejectedError(`order ${orderId} never requested "${command.key}"`);
  }
  const names = FACT_EVENTS[fact];
  const unchanged = { reply: summary(state) };
  if (isFinalStatus(current.status)) return unchanged;

  const events: OrderEvent[] = [];
  switch (command.type) {
    case "oncely.effect.succeeded": {
      const resultId = resultIdOf(command.result, names.resultField);
      if (resultId === undefined) {
        throw new CommandRejectedError(
          `outcome of "${command.key}" lacks ${names.resultField}: ${JSON.stringify(command.result)}`,
        );
      }
      events.push({
        type: names.completed,
        key: command.key,
        [names.resultField]: resultId,
        via: command.via,
      } as OrderEvent);
      break;
    }
    case "oncely.effect.failed":
      events.push({ type: names.failed, key: command.key, reason: command.error, via: command.via });
      break;
    case "oncely.effect.unknown":
      // Each further Unknown attempt is already kept by the runtime's inbox; the fact moves only once.
      if (current.status === "Unknown") return unchanged;
      events.push({ type: names.unknown, key: command.key, error: command.error, attempt: command.attempt });
      break;
    case "oncely.effect.needs-reconciliation":
      if (current.needsReconciliation) return unchanged;
      events.push({ type: names.reconcile, key: command.key, error: command.error });
      break;
  }
  const effects: EffectRequest[] = [];
  const next = apply(state, events);
  if (fact === "payment") followUps(next, orderId, events, effects);
  return { events, effects, reply: summary(next) };
}

/**
 * What a paid order starts: the confirmation mail, the picklist (unless the warehouse already
 * shipped: a second picklist could ship twice), and the shipping mail once shipped. Each only
 * from NotRequested, so calling this again never starts anything twice.
 */
function followUps(state: OrderState, orderId: string, events: OrderEvent[], effects: EffectRequest[]): void {
  const details = state.details;
  if (!details || state.payment.status !== "Completed") return;
  const request = (fact: EffectFact, event: OrderEvent, kind: string, input: unknown) => {
    if (state[fact].status !== "NotRequested") return;
    events.push(event);
    effects.push({ kind, key: effectKey(orderId, fact), input });
  };
  const mail = (template: string): EmailInput => ({ to: details.customerEmail, template, orderId });
  const confirmationKey = effectKey(orderId, "confirmationEmail");
  request(
    "confirmationEmail",
    { type: "ConfirmationEmailRequested", key: confirmationKey, to: details.customerEmail },
    EFFECT_KINDS.email,
    mail(EMAIL_TEMPLATES.confirmation),
  );
  const shipped = state.shipping.status === "Completed";
  if (!shipped) {
    const picklist: PicklistInput = {
      orderId,
      lines: details.lines.map(({ sku, quantity }) => ({ sku, quantity })),
    };
    request(
      "picklist",
      { type: "PicklistRequested", key: effectKey(orderId, "picklist") },
      EFFECT_KINDS.picklist,
      picklist,
    );
  } else {
    request(
      "shippingEmail",
      { type: "ShippingEmailRequested", key: effectKey(orderId, "shippingEmail"), to: details.customerEmail },
      EFFECT_KINDS.email,
      mail(EMAIL_TEMPLATES.shipping),
    );
  }
}

const apply = (state: OrderState, events: OrderEvent[]) => events.reduce(evolve, state);

function resultIdOf(result: unknown, field: string): string | undefined {
  if (result === null || typeof result !== "object") return undefined;
  const value = (result as Record<string, unknown>)[field];
  return typeof value === "string" && value !== "" ? value : undefined;
}

/** The reply: the derived status and the stored provider results (the "stored result" of the seed). */
export function summary(state: OrderState) {
  return {
    orderId: state.orderId,
    status: deriveStatus(state) ?? null,
    paymentId: state.payment.resultId,
    picklistId: state.picklist.resultId,
    shipmentId: state.shipping.shipmentId,
  };
}
