import type { DecideContext, Decision, EffectStatus, OutcomeOf, PublishRequest } from "oncely";
import { CommandRejectedError, defineActor, effectStatusAfter, isFinalStatus } from "oncely";
import { picklistCancelEffect, picklistEffect } from "../effects/declarations.js";
import { eventIds, type PayloadOf, SOURCES } from "../integration/events.js";
import { attemptKey, type PicklistCancelInput } from "../ordering/effects.js";

/**
 * The Shipping context: the actor `shipment/{orderId}` owns the warehouse (the picklist effect
 * `order:{orderId}:picklist`) and the warehouse's webhook. It starts only on `StartShipping` from
 * the fulfillment process (which sends it once the payment was processed), and publishes
 * `PicklistAccepted` and `OrderShipped`, each in the commit of the fact it announces, and
 * `PicklistRejected` when nothing will ship (out of stock), `LinesUnavailable` when the warehouse
 * reports lines of an accepted picklist it cannot ship (its webhook). `CancelShipping` (the order was
 * cancelled after shipping started) asks the warehouse to cancel the picklist, which it refuses
 * once shipped.
 */

export interface StartShipping {
  type: "StartShipping";
  orderId: string;
  lines: { sku: string; quantity: number }[];
}
export interface RecordShipment {
  type: "RecordShipment";
  /** The warehouse's webhook event id. */
  eventId: string;
  shipmentId: string;
  /** The warehouse's clock: audit only, never used to order anything. */
  occurredAt: string;
  /**
   * The adjustments the warehouse says it reported before shipping (absent: none). One this
   * shipment never recorded (its webhook was lost) is asked for (see shipment-check.ts), and the
   * `OrderShipped` names it, so the order completes only once its lines are refunded.
   */
  adjustmentIds?: string[] | undefined;
}
/**
 * The warehouse's webhook: it accepted the picklist but cannot ship these lines (one adjustment).
 * Recorded once per adjustment and published as `LinesUnavailable`: the order refunds those lines.
 */
export interface RecordLinesUnavailable {
  type: "RecordLinesUnavailable";
  /** The warehouse's webhook event id. */
  eventId: string;
  adjustmentId: string;
  lines: { sku: string; quantity: number }[];
}
/** From the fulfillment process, once the order was cancelled after shipping started. */
export interface CancelShipping {
  type: "CancelShipping";
  orderId: string;
}
export type ShipmentCommand = StartShipping | RecordShipment | RecordLinesUnavailable | CancelShipping;

type Via = "run" | "lookup" | "operator";
export type ShipmentEvent =
  | { type: "ShippingStarted"; orderId: string; lines: { sku: string; quantity: number }[] }
  | { type: "PicklistRequested"; key: string }
  | { type: "PicklistAccepted"; key: string; picklistId: string; via: Via }
  | { type: "PicklistRejected"; key: string; reason: string; via: Via }
  | { type: "PicklistUnknown"; key: string; error: string; attempt: number }
  | { type: "PicklistNeedsReconciliation"; key: string; error: string }
  | { type: "ShipmentRecorded"; eventId: string; shipmentId: string; occurredAt: string }
  /** Lines the warehouse accepted and cannot ship: published as LinesUnavailable. */
  | {
      type: "LinesReportedUnavailable";
      eventId: string;
      adjustmentId: string;
      lines: { sku: string; quantity: number }[];
    }
  /** Nothing will ship (the warehouse is out of stock, or refused every attempt): published as PicklistRejected. */
  | { type: "ShippingGivenUp"; reason: string }
  | { type: "ShippingCancelRequested"; key: string }
  | { type: "PicklistCancelled"; key: string; cancelled: string[]; via: Via }
  /** The warehouse had already shipped: the order records it as shipped before the cancel. */
  | { type: "PicklistCancelRefused"; key: string; reason: string; via: Via }
  | { type: "PicklistCancelUnknown"; key: string; error: string; attempt: number }
  | { type: "PicklistCancelNeedsReconciliation"; key: string; error: string };

export interface ShipmentState {
  orderId: string;
  lines: { sku: string; quantity: number }[] | null;
  /** The current picklist request (attempt n has key `picklistKey(orderId, n)`). */
  picklist: {
    key: string | null;
    attempt: number;
    status: EffectStatus;
    picklistId: string | null;
    reason: string | null;
    lastError: string | null;
    needsReconciliation: boolean;
  };
  rejections: string[];
  shipment: { eventId: string; shipmentId: string; occurredAt: string } | null;
  /** The warehouse's adjustments (lines it cannot ship), each recorded and published once. */
  shortages: { adjustmentId: string; lines: { sku: string; quantity: number }[] }[];
  /** Why nothing will ship, once given up (published once). */
  givenUp: string | null;
  /** The cancellation of the picklist at the warehouse, once asked for. */
  cancel: { key: string; status: EffectStatus; reason: string | null; needsReconciliation: boolean } | null;
}

export const initialShipmentState = (orderId: string): ShipmentState => ({
  orderId,
  lines: null,
  picklist: {
    key: null,
    attempt: 0,
    status: "NotRequested",
    picklistId: null,
    reason: null,
    lastError: null,
    needsReconciliation: false,
  },
  /** Why earlier picklist requests definitely failed. */
  rejections: [],
  shipment: null,
  shortages: [],
  givenUp: null,
  cancel: null,
});

export function evolveShipment(state: ShipmentState, event: ShipmentEvent): ShipmentState {
  const picklist = state.picklist;
  switch (event.type) {
    case "ShippingStarted":
      return state.lines ? state : { ...state, lines: event.lines };
    case "PicklistRequested":
      if (picklist.key === event.key) return state;
      // A new request (first, or after a definite failure of the previous one): a new effect, a new key.
      return {
        ...state,
        picklist: {
          ...initialShipmentState(state.orderId).picklist,
          key: event.key,
          attempt: picklist.attempt + 1,
          status: "Pending",
        },
      };
    case "PicklistAccepted":
      if (isFinalStatus(picklist.status)) return state;
      return {
        ...state,
        picklist: {
          ...picklist,
          status: "Completed",
          picklistId: event.picklistId,
          lastError: null,
          needsReconciliation: false,
        },
      };
    case "PicklistRejected":
      if (isFinalStatus(picklist.status)) return state;
      return {
        ...state,
        picklist: { ...picklist, status: "Failed", reason: event.reason, lastError: null, needsReconciliation: false },
        rejections: [...state.rejections, event.reason],
      };
    case "PicklistUnknown":
      return {
        ...state,
        picklist: { ...picklist, status: effectStatusAfter(picklist.status, "Unknown"), lastError: event.error },
      };
    case "PicklistNeedsReconciliation":
      if (isFinalStatus(picklist.status)) return state;
      return {
        ...state,
        picklist: {
          ...picklist,
          status: effectStatusAfter(picklist.status, "Unknown"),
          lastError: event.error,
          needsReconciliation: true,
        },
      };
    case "ShippingGivenUp":
      if (state.givenUp !== null) return state;
      return { ...state, givenUp: event.reason };
    case "ShippingCancelRequested":
      if (state.cancel) return state;
      return { ...state, cancel: { key: event.key, status: "Pending", reason: null, needsReconciliation: false } };
    case "PicklistCancelled":
    case "PicklistCancelRefused":
    case "PicklistCancelUnknown":
    case "PicklistCancelNeedsReconciliation": {
      const cancel = state.cancel;
      if (!cancel || isFinalStatus(cancel.status)) return state;
      if (event.type === "PicklistCancelled")
        return { ...state, cancel: { ...cancel, status: "Completed", needsReconciliation: false } };
      if (event.type === "PicklistCancelRefused") {
        return { ...state, cancel: { ...cancel, status: "Failed", reason: event.reason, needsReconciliation: false } };
      }
      return {
        ...state,
        cancel: {
          ...cancel,
          status: effectStatusAfter(cancel.status, "Unknown"),
          needsReconciliation: cancel.needsReconciliation || event.type === "PicklistCancelNeedsReconciliation",
        },
      };
    }
    case "LinesReportedUnavailable":
      if (state.shortages.some((s) => s.adjustmentId === event.adjustmentId)) return state;
      return {
        ...state,
        shortages: [...state.shortages, { adjustmentId: event.adjustmentId, lines: event.lines }],
      };
    case "ShipmentRecorded":
      if (state.shipment) return state;
      return {
        ...state,
        shipment: { eventId: event.eventId, shipmentId: event.shipmentId, occurredAt: event.occurredAt },
      };
  }
}

const publish = (
  state: ShipmentState,
  type: "PicklistAccepted" | "OrderShipped" | "PicklistRejected" | "LinesUnavailable",
  eventId: string,
  payload: unknown,
): PublishRequest => ({
  eventId,
  type,
  source: SOURCES.shipping,
  aggregateId: state.orderId,
  payload,
});

/** Picklist requests after which a definite failure is left to a person. */
export const MAX_PICKLIST_ATTEMPTS = 3;

/**
 * `order:{id}:picklist` for the first request, `order:{id}:picklist:{n}` for a later one. A new
 * key is only ever taken after the previous request definitely failed (the warehouse refused it,
 * or an operator found no record of it): nothing can ship twice from it.
 */
export const picklistKey = (orderId: string, attempt: number) => attemptKey(orderId, "picklist", attempt);

/** What `shipment/{orderId}` decides on: its commands, and the outcomes of its picklist and cancel requests. */
export type ShipmentActorCommand =
  | ShipmentCommand
  | OutcomeOf<typeof picklistEffect>
  | OutcomeOf<typeof picklistCancelEffect>;

export function decideShipment(
  command: ShipmentActorCommand,
  state: ShipmentState,
  context: DecideContext,
): Decision<ShipmentEvent> {
  const orderId = context.id;
  switch (command.type) {
    case "StartShipping": {
      const key = picklistKey(orderId, 1);
      if (command.orderId !== orderId)
        throw new CommandRejectedError(`shipment ${orderId} got StartShipping for ${command.orderId}`);
      // Started already (another delivery of the same decision): the picklist is not sent twice. Nor
      // at all once cancelled (a StartShipping delivered after the CancelShipping sent behind it).
      if (state.lines || state.cancel) return { reply: shipmentSummary(state) };
      const events: ShipmentEvent[] = [
        { type: "ShippingStarted", orderId, lines: command.lines },
        { type: "PicklistRequested", key },
      ];
      return {
        events,
        // The warehouse ships once per picklist key, so a shipment already recorded still gets no second picklist:
        // here none can be, because a shipment is refused before the start.
        effects: [picklistEffect.request(key, { orderId, lines: command.lines })],
        reply: shipmentSummary(events.reduce(evolveShipment, state)),
      };
    }
    case "RecordShipment": {
      // A webhook for an order Shipping never started: refuse, so no stream is created for it.
      if (!state.lines) throw new UnknownShipmentError(orderId);
      if (state.shipment) return { reply: { ...shipmentSummary(state), duplicate: true } };
      const event: ShipmentEvent = {
        type: "ShipmentRecorded",
        eventId: command.eventId,
        shipmentId: command.shipmentId,
        occurredAt: command.occurredAt,
      };
      // The shortages recorded before the shipment go with it: the order may hear of the shipment first.
      const payload: PayloadOf<"OrderShipped"> = {
        orderId,
        shipmentId: command.shipmentId,
        warehouseEventId: command.eventId,
        shippedAt: command.occurredAt,
        ...adjustmentsNamed(state, command.adjustmentIds),
      };
      return {
        events: [event],
        publish: [publish(state, "OrderShipped", eventIds.orderShipped(orderId), payload)],
        reply: shipmentSummary(evolveShipment(state, event)),
      };
    }
    case "RecordLinesUnavailable": {
      // Like a shipment: only for an order whose shipping started, so no stream is created for a stranger.
      if (!state.lines) throw new UnknownShipmentError(orderId);
      // The same adjustment again (under another event id): already recorded and published.
      if (state.shortages.some((s) => s.adjustmentId === command.adjustmentId)) {
        return { reply: { ...shipmentSummary(state), duplicate: true } };
      }
      const event: ShipmentEvent = {
        type: "LinesReportedUnavailable",
        eventId: command.eventId,
        adjustmentId: command.adjustmentId,
        lines: command.lines,
      };
      const payload: PayloadOf<"LinesUnavailable"> = {
        orderId,
        adjustmentId: command.adjustmentId,
        lines: command.lines,
      };
      const eventId = eventIds.linesUnavailable(orderId, command.adjustmentId);
      return {
        events: [event],
        publish: [publish(state, "LinesUnavailable", eventId, payload)],
        reply: shipmentSummary(evolveShipment(state, event)),
      };
    }
  }
  if (command.type === "CancelShipping") return cancelShipping(command, state, orderId);
  if (command.kind === picklistCancelEffect.kind) return cancelOutcome(command, state);
  const key = state.picklist.key;
  const unchanged = { reply: shipmentSummary(state) };
  if (key === null || command.key !== key) {
    const earlier = Array.from({ length: state.picklist.attempt - 1 }, (_, i) => picklistKey(orderId, i + 1));
    // A straggler of an earlier request, final before the next one was asked for: nothing to do.
    if (earlier.includes(command.key)) return unchanged;
    throw new CommandRejectedError(`shipment ${orderId} never sent a picklist under "${command.key}"`);
  }
  if (isFinalStatus(state.picklist.status)) return unchanged;
  switch (command.type) {
    case "oncely.effect.succeeded": {
      // Typed and checked by the effect's result schema before it got here.
      const { picklistId } = command.result;
      const event: ShipmentEvent = { type: "PicklistAccepted", key, picklistId, via: command.via };
      const payload: PayloadOf<"PicklistAccepted"> = { orderId, picklistId };
      return {
        events: [event],
        publish: [publish(state, "PicklistAccepted", eventIds.picklistAccepted(orderId), payload)],
        reply: shipmentSummary(evolveShipment(state, event)),
      };
    }
    case "oncely.effect.failed": {
      const events: ShipmentEvent[] = [{ type: "PicklistRejected", key, reason: command.error, via: command.via }];
      // Cancelled meanwhile: the refusal is welcome, nothing is asked again and nothing announced.
      if (state.cancel) return { events, reply: shipmentSummary(events.reduce(evolveShipment, state)) };
      // The warehouse never took it: ask again under a new key, a bounded number of times; out of
      // stock is final at once. Giving up is published (PicklistRejected): the order refunds.
      const attempt = state.picklist.attempt + 1;
      if (attempt > MAX_PICKLIST_ATTEMPTS || !state.lines || isOutOfStock(command.error)) {
        const payload: PayloadOf<"PicklistRejected"> = { orderId, reason: command.error };
        const given: ShipmentEvent = { type: "ShippingGivenUp", reason: command.error };
        return {
          events: [...events, given],
          publish: [publish(state, "PicklistRejected", eventIds.picklistRejected(orderId), payload)],
          reply: shipmentSummary([...events, given].reduce(evolveShipment, state)),
        };
      }
      const next = picklistKey(orderId, attempt);
      events.push({ type: "PicklistRequested", key: next });
      return {
        events,
        // The same lines again, read from the refused request itself.
        effects: [picklistEffect.request(next, command.input)],
        reply: shipmentSummary(events.reduce(evolveShipment, state)),
      };
    }
    case "oncely.effect.unknown": {
      if (state.picklist.status === "Unknown") return unchanged;
      const event: ShipmentEvent = { type: "PicklistUnknown", key, error: command.error, attempt: command.attempt };
      return { events: [event], reply: shipmentSummary(evolveShipment(state, event)) };
    }
    case "oncely.effect.needs-reconciliation": {
      if (state.picklist.needsReconciliation) return unchanged;
      const event: ShipmentEvent = { type: "PicklistNeedsReconciliation", key, error: command.error };
      return { events: [event], reply: shipmentSummary(evolveShipment(state, event)) };
    }
  }
}

/** A refusal that no new attempt can change: the warehouse has not got the goods. */
const isOutOfStock = (reason: string) => /out of stock/i.test(reason);

/** `order:{id}:picklist-cancel`: the one request to the warehouse to cancel an order's picklists. */
export const picklistCancelKey = (orderId: string) => `order:${orderId}:picklist-cancel`;

/**
 * The order was cancelled after shipping started: the warehouse is asked to cancel the picklist
 * (an effect of its own). Nothing to ask when the shipment is already recorded (the order knows, or
 * will know from OrderShipped, and records it as shipped before the cancel) or when asked before.
 */
function cancelShipping(command: CancelShipping, state: ShipmentState, orderId: string): Decision<ShipmentEvent> {
  if (command.orderId !== orderId) {
    throw new CommandRejectedError(`shipment ${orderId} got CancelShipping for ${command.orderId}`);
  }
  if (state.cancel || state.shipment) return { reply: shipmentSummary(state) };
  const key = picklistCancelKey(orderId);
  const event: ShipmentEvent = { type: "ShippingCancelRequested", key };
  const input: PicklistCancelInput = { orderId };
  return {
    events: [event],
    effects: [picklistCancelEffect.request(key, input)],
    reply: shipmentSummary(evolveShipment(state, event)),
  };
}

function cancelOutcome(command: OutcomeOf<typeof picklistCancelEffect>, state: ShipmentState): Decision<ShipmentEvent> {
  const unchanged = { reply: shipmentSummary(state) };
  const cancel = state.cancel;
  if (!cancel) throw new CommandRejectedError(`shipment ${state.orderId} never asked to cancel "${command.key}"`);
  if (isFinalStatus(cancel.status)) return unchanged;
  const { key } = command;
  let event: ShipmentEvent;
  switch (command.type) {
    case "oncely.effect.succeeded":
      // Typed and checked by the effect's result schema before it got here.
      event = { type: "PicklistCancelled", key, cancelled: command.result.cancelled, via: command.via };
      break;
    case "oncely.effect.failed":
      event = { type: "PicklistCancelRefused", key, reason: command.error, via: command.via };
      break;
    case "oncely.effect.unknown":
      if (cancel.status === "Unknown") return unchanged;
      event = { type: "PicklistCancelUnknown", key, error: command.error, attempt: command.attempt };
      break;
    case "oncely.effect.needs-reconciliation":
      if (cancel.needsReconciliation) return unchanged;
      event = { type: "PicklistCancelNeedsReconciliation", key, error: command.error };
      break;
  }
  return { events: [event], reply: shipmentSummary(evolveShipment(state, event)) };
}

/** A shipment recorded for an order whose shipping never started (a typo, a foreign id). */
export class UnknownShipmentError extends CommandRejectedError {
  constructor(readonly orderId: string) {
    super(`shipping never started for order ${orderId}`);
    this.name = "UnknownShipmentError";
  }
}

export const shipmentSummary = (state: ShipmentState) => ({
  orderId: state.orderId,
  picklistId: state.picklist.picklistId,
  shipmentId: state.shipment?.shipmentId ?? null,
});

/** `shipment/{orderId}`. */
export const shipmentActor = defineActor<
  ShipmentState,
  ShipmentCommand,
  ShipmentEvent,
  typeof picklistEffect | typeof picklistCancelEffect
>({
  type: "shipment",
  effects: [picklistEffect, picklistCancelEffect],
  initialState: initialShipmentState,
  evolve: evolveShipment,
  decide: decideShipment,
  // Version 2: given up and cancel facts. Version 3: shortages.
  snapshot: {
    every: 50,
    schemaVersion: 3,
    // A version-2 snapshot lacks only the shortages, and none can predate this version.
    migrate: (state, from) => (from === 2 ? { ...(state as ShipmentState), shortages: [] } : undefined),
  },
});

export const shipmentAddress = (orderId: string) => `shipment/${orderId}`;

/** The warehouse webhook's dedup id in the shipment's inbox. */
export const warehouseMessageId = (eventId: string) => `warehouse:${eventId}`;

/** The adjustments an `OrderShipped` names: those recorded, then those the warehouse names that were not. */
function adjustmentsNamed(state: ShipmentState, named: readonly string[] | undefined): { adjustmentIds?: string[] } {
  const ids = state.shortages.map((s) => s.adjustmentId);
  for (const id of named ?? []) if (!ids.includes(id)) ids.push(id);
  return ids.length > 0 ? { adjustmentIds: ids } : {};
}
