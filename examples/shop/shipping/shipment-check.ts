import {
  type ActorDefinition,
  CommandRejectedError,
  type DecideContext,
  type Decision,
  deadline,
  type OutcomeOf,
  type PublishRequest,
  type TimerFired,
} from "oncely";
import type { picklistCancelEffect, picklistEffect } from "../effects/declarations.js";
import { shipmentCheckEffect } from "../effects/declarations.js";
import type { ShipmentCheckResult } from "../ordering/effects.js";
import {
  type RecordShipment,
  type ShipmentCommand,
  type ShipmentEvent,
  type ShipmentState,
  type shipmentActor,
  shipmentSummary,
} from "./actor.js";

/**
 * The shipment check: a webhook the warehouse gave up on (its retries ran out while the shop was
 * restarting) would leave the order `paid` until its shipment deadline, then in `attention`. So
 * when the warehouse accepts the picklist, `shipment/{id}` asks for a durable timer; if it fires
 * before the shipment was recorded, the shipment asks the warehouse (the effect
 * `order:{id}:shipment-check:{n}`, a read of `GET /shipments?idempotencyKey={picklistKey}`), and
 * the answer comes back as the effect's outcome:
 *
 * - `shipped`: recorded exactly as the webhooks would have recorded it, by the same decisions
 *   (`RecordLinesUnavailable` for each adjustment not heard of, then `RecordShipment`), with the
 *   warehouse's own event ids: the same `OrderShipped` is published under the same event id, and a
 *   webhook that still arrives later is a duplicate, never a second transition;
 * - `accepted` (not shipped yet): asked again after twice the delay, at most `MAX_SHIPMENT_CHECKS`
 *   times in all; the order's shipment deadline speaks for an order that still does not ship;
 * - `cancelled`, or the warehouse has no record of the picklist (a definite failure): nothing more
 *   is asked, and the order's shipment deadline puts it in `attention` (ordering/shipment-deadline.ts).
 *
 * The state decides, as for every timer: a check due after the webhook came asks nothing. Each
 * check has its own keys, so a retried decision asks for one timer and one read, and a crash
 * between the read and the commit of its outcome only reads again. Kept apart from the shipment's
 * decider, which it wraps, so its rules (and the webhooks' path) stay as they are.
 */

/** The timer's name: a metric label (`oncely_deadline_missed_total{actor_type="shipment",deadline="shipment-check"}`). */
export const SHIPMENT_CHECK = "shipment-check";

/** How long after the picklist's acceptance the shipment asks the warehouse, if no webhook came (1 min). */
export const DEFAULT_SHIPMENT_CHECK_MS = 60_000;

/**
 * Checks in all; with the default delay the last is due some 17 hours after the acceptance (1, 2,
 * 4, … 512 minutes apart): a picklist that waits that long to ship is long in `attention`.
 */
export const MAX_SHIPMENT_CHECKS = 10;

/** `order:{id}:shipment-check:{n}`: the n-th read of the warehouse. */
export const shipmentCheckKey = (orderId: string, attempt: number): string =>
  `order:${orderId}:shipment-check:${attempt}`;
/** `order:{id}:shipment-check:{n}:due`: the timer that asks for it. */
export const shipmentCheckDueKey = (orderId: string, attempt: number): string =>
  `${shipmentCheckKey(orderId, attempt)}:due`;

type Via = "run" | "lookup" | "operator";
/** What the warehouse said; `unknown-to-warehouse` when it has no record of the picklist. */
export type ShipmentCheckAnswer = ShipmentCheckResult["status"] | "unknown-to-warehouse";

export type ShipmentCheckEvent =
  | { type: "ShipmentCheckRequested"; key: string; attempt: number; picklistKey: string }
  | { type: "ShipmentCheckAnswered"; key: string; answer: ShipmentCheckAnswer; reason?: string; via: Via };

export type ShipmentEventWithCheck = ShipmentEvent | ShipmentCheckEvent;

/** The shipment's state plus its checks, if any (absent in shipments recorded before they existed). */
export type ShipmentStateWithCheck = ShipmentState & {
  check?: { attempt: number; key: string; answer: ShipmentCheckAnswer | null };
};

type ShipmentOutcome = OutcomeOf<typeof picklistEffect> | OutcomeOf<typeof picklistCancelEffect>;
type CheckOutcome = OutcomeOf<typeof shipmentCheckEffect>;
export type ShipmentCommandWithCheck = ShipmentCommand | TimerFired | CheckOutcome;
type ShipmentActor = typeof shipmentActor;
export type ShipmentActorWithCheck = ActorDefinition<
  ShipmentStateWithCheck,
  ShipmentCommandWithCheck,
  ShipmentEventWithCheck,
  ShipmentOutcome
>;

export interface ShipmentCheckOptions {
  /** Delay from the picklist's acceptance to the first check; each later check waits twice as long. */
  afterMs: number;
  /** Checks in all (default `MAX_SHIPMENT_CHECKS`). */
  maxChecks?: number;
}

/** The shipment actor, asking the warehouse `afterMs` after the picklist's acceptance when no shipment came. */
export function withShipmentCheck(
  shipment: ShipmentActor,
  { afterMs, maxChecks = MAX_SHIPMENT_CHECKS }: ShipmentCheckOptions,
): ShipmentActorWithCheck {
  if (!Number.isFinite(afterMs) || afterMs <= 0) {
    throw new RangeError(`the shipment check delay must be a positive number of ms, got ${afterMs}`);
  }
  if (!Number.isInteger(maxChecks) || maxChecks < 1) {
    throw new RangeError(`the shipment checks must be a positive integer, got ${maxChecks}`);
  }
  const { events: schemas, ...base } = shipment;
  // Declared event schemas would have to name the check's events too: the shipment declares none.
  if (schemas) throw new TypeError("withShipmentCheck: the shipment's event schemas must include its check events");
  const evolve = (state: ShipmentStateWithCheck, event: ShipmentEventWithCheck): ShipmentStateWithCheck => {
    switch (event.type) {
      case "ShipmentCheckRequested":
        if ((state.check?.attempt ?? 0) >= event.attempt) return state;
        return { ...state, check: { attempt: event.attempt, key: event.key, answer: null } };
      case "ShipmentCheckAnswered":
        if (state.check?.key !== event.key || state.check.answer !== null) return state;
        return { ...state, check: { ...state.check, answer: event.answer } };
      default:
        return { ...state, ...shipment.evolve(state, event) };
    }
  };
  const timer = (orderId: string, attempt: number, at: number) =>
    deadline({ name: SHIPMENT_CHECK, key: shipmentCheckDueKey(orderId, attempt), at, payload: { attempt } });

  const decide = (
    command: ShipmentCommandWithCheck | ShipmentOutcome,
    state: ShipmentStateWithCheck,
    context: DecideContext,
  ): Decision<ShipmentEventWithCheck> => {
    if (command.type === "oncely.timer.fired") return checkDue(command, state, context.id);
    if ("kind" in command && command.kind === shipmentCheckEffect.kind) {
      return checkAnswered(command as CheckOutcome, state, context);
    }
    const decision: Decision<ShipmentEventWithCheck> = shipment.decide(
      command as ShipmentCommand | ShipmentOutcome,
      state,
      context,
    );
    if (command.type === "RecordShipment") return askForMissingAdjustments(command, decision, state, context.id);
    if (!decision.events?.some((e) => e.type === "PicklistAccepted")) return decision;
    // Asked in the commit that records the acceptance; a retried decision asks with the same key.
    return { ...decision, effects: [...(decision.effects ?? []), timer(context.id, 1, context.now + afterMs)] };
  };

  /**
   * A shipment whose webhook names adjustments this shipment never recorded (their own webhooks
   * were lost): recorded now (its `OrderShipped` names them, so the order waits for their refunds),
   * and the warehouse asked at once, under the next check's key, for their lines. The answer records
   * them as their webhooks would have (`recordShipped`). A check still in flight is superseded: its
   * answer, perhaps from before the shipment, is a straggler.
   */
  function askForMissingAdjustments(
    command: RecordShipment,
    decision: Decision<ShipmentEventWithCheck>,
    state: ShipmentStateWithCheck,
    orderId: string,
  ): Decision<ShipmentEventWithCheck> {
    const picklistKey = state.picklist.key;
    const recorded = decision.events?.some((e) => e.type === "ShipmentRecorded") ?? false;
    const missing = (command.adjustmentIds ?? []).filter((id) => !state.shortages.some((s) => s.adjustmentId === id));
    if (!recorded || missing.length === 0 || picklistKey === null) return decision;
    const attempt = (state.check?.attempt ?? 0) + 1;
    const key = shipmentCheckKey(orderId, attempt);
    const event: ShipmentCheckEvent = { type: "ShipmentCheckRequested", key, attempt, picklistKey };
    return {
      ...decision,
      events: [...(decision.events ?? []), event],
      effects: [...(decision.effects ?? []), shipmentCheckEffect.request(key, { orderId, picklistKey })],
    };
  }

  /** The state decides: a shipment recorded, nothing that will ship, or this check asked already: nothing to do. */
  function checkDue(command: TimerFired, state: ShipmentStateWithCheck, orderId: string) {
    if (command.name !== SHIPMENT_CHECK) {
      throw new CommandRejectedError(`shipment ${orderId} asked for no timer named "${command.name}"`);
    }
    const attempt = Number((command.payload as { attempt?: unknown } | null)?.attempt);
    if (!Number.isInteger(attempt) || attempt < 1) {
      throw new CommandRejectedError(`shipment ${orderId}: timer "${command.key}" names no check`);
    }
    const picklistKey = state.picklist.key;
    if (!expectsShipment(state) || picklistKey === null || (state.check?.attempt ?? 0) >= attempt) return {};
    const key = shipmentCheckKey(orderId, attempt);
    const event: ShipmentCheckEvent = { type: "ShipmentCheckRequested", key, attempt, picklistKey };
    return {
      events: [event],
      effects: [shipmentCheckEffect.request(key, { orderId, picklistKey })],
    };
  }

  function checkAnswered(
    command: CheckOutcome,
    state: ShipmentStateWithCheck,
    context: DecideContext,
  ): Decision<ShipmentEventWithCheck> {
    const check = state.check;
    const unchanged = { reply: shipmentSummary(state) };
    if (!check || command.key !== check.key) {
      // An earlier check's straggler (answered before the next one was asked): nothing to do.
      const earlier = Array.from({ length: (check?.attempt ?? 1) - 1 }, (_, i) => shipmentCheckKey(context.id, i + 1));
      if (earlier.includes(command.key)) return unchanged;
      throw new CommandRejectedError(`shipment ${context.id} never asked the warehouse under "${command.key}"`);
    }
    // Answered already; not final yet (a resolver or an operator will settle it, visible in the queue).
    if (check.answer !== null || command.type === "oncely.effect.unknown") return unchanged;
    if (command.type === "oncely.effect.needs-reconciliation") return unchanged;
    if (command.type === "oncely.effect.failed") {
      const event: ShipmentCheckEvent = {
        type: "ShipmentCheckAnswered",
        key: check.key,
        answer: "unknown-to-warehouse",
        reason: command.error,
        via: command.via,
      };
      return { events: [event], reply: shipmentSummary(evolve(state, event)) };
    }
    const result = command.result;
    const answered: ShipmentCheckEvent = {
      type: "ShipmentCheckAnswered",
      key: check.key,
      answer: result.status,
      via: command.via,
    };
    if (result.status === "shipped") return recordShipped(result, evolve(state, answered), answered, context);
    const after = evolve(state, answered);
    const next = check.attempt + 1;
    // Not shipped yet: ask again later, unless nothing will ship or every check was spent.
    const again =
      result.status === "accepted" && next <= maxChecks && expectsShipment(after)
        ? [timer(context.id, next, context.now + afterMs * 2 ** (next - 1))]
        : [];
    return { events: [answered], effects: again, reply: shipmentSummary(after) };
  }

  /**
   * What the webhooks would have done, by the same decisions: each adjustment not heard of yet,
   * then the shipment (whose `OrderShipped` names the adjustments recorded before it).
   */
  function recordShipped(
    result: Extract<ShipmentCheckResult, { status: "shipped" }>,
    state: ShipmentStateWithCheck,
    answered: ShipmentCheckEvent,
    context: DecideContext,
  ): Decision<ShipmentEventWithCheck> {
    const events: ShipmentEventWithCheck[] = [answered];
    const publish: PublishRequest[] = [];
    let current = state;
    const apply = (command: ShipmentCommand) => {
      const decision = shipment.decide(command, current, context);
      for (const event of decision.events ?? []) {
        events.push(event);
        current = evolve(current, event);
      }
      publish.push(...(decision.publish ?? []));
    };
    for (const adjustment of result.adjustments) {
      if (current.shortages.some((s) => s.adjustmentId === adjustment.adjustmentId)) continue;
      apply({ type: "RecordLinesUnavailable", ...adjustment });
    }
    if (!current.shipment) apply({ type: "RecordShipment", ...result.shipment });
    return { events, publish, reply: shipmentSummary(current) };
  }

  return { ...base, effects: [...(shipment.effects ?? []), shipmentCheckEffect], evolve, decide };
}

/** A shipment is still awaited: the picklist was accepted, nothing recorded it, and the warehouse did not cancel it. */
function expectsShipment(state: ShipmentStateWithCheck): boolean {
  return (
    state.picklist.status === "Completed" &&
    state.shipment === null &&
    state.givenUp === null &&
    state.cancel?.status !== "Completed"
  );
}
