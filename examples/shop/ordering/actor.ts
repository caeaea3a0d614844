import { defineActor, type EffectOutcome } from "oncely";
import { type OrderCommand, parseOrderCommand } from "./commands.js";
import { decide } from "./decide.js";
import type { OrderEvent } from "./events.js";
import { evolve } from "./evolve.js";
import { initialOrderState, type OrderState } from "./state.js";

/**
 * The order actor, `order/{orderId}` (Ordering context). No `onRecovered`: a recovered order has
 * nothing to resume itself, because every mail it asked for and its `OrderPlaced` sit in the
 * outbox, where the dispatcher and the relay carry on with the same keys and event id.
 * Recovery only replays events.
 */
export const orderActor = defineActor<OrderState, OrderCommand | EffectOutcome, OrderEvent>({
  type: "order",
  initialState: initialOrderState,
  evolve,
  decide,
  parseCommand: parseOrderCommand,
  // Snapshots only shorten recovery; a state from snapshot + tail equals one from full replay.
  // Version 3: mails hold their attempt and key; version 4: cancellation, stock, refunds and their mails;
  // version 5: the shortages a shipment was reported with. A version-4 snapshot was written by code whose
  // shipments carried none, so it migrates exactly by adding an empty list.
  snapshot: {
    every: 50,
    schemaVersion: 5,
    migrate: (state, from) =>
      from === 4
        ? { ...(state as OrderState), shipping: { ...(state as OrderState).shipping, adjustmentIds: [] } }
        : undefined,
  },
});
