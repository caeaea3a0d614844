import type { OutcomeOf, TimerFired } from "oncely";
import { CommandRejectedError } from "oncely";
import { given } from "oncely/testing";
import { describe, expect, it } from "vitest";
import { type picklistEffect, shipmentCheckEffect } from "../effects/declarations.js";
import { eventIds } from "../integration/events.js";
import type { ShipmentCheckResult } from "../ordering/effects.js";
import { picklistKey, type RecordShipment, shipmentActor } from "./actor.js";
import {
  MAX_SHIPMENT_CHECKS,
  SHIPMENT_CHECK,
  type ShipmentCheckEvent,
  type ShipmentEventWithCheck,
  shipmentCheckDueKey,
  shipmentCheckKey,
  withShipmentCheck,
} from "./shipment-check.js";

const id = "7";
const NOW = Date.UTC(2026, 0, 1);
const AFTER = 60_000;
const shipment = withShipmentCheck(shipmentActor, { afterMs: AFTER });
const lines = [{ sku: "book", quantity: 2 }];
const key = picklistKey(id, 1);

const started: ShipmentEventWithCheck[] = [
  { type: "ShippingStarted", orderId: id, lines },
  { type: "PicklistRequested", key },
];
const accepted: ShipmentEventWithCheck[] = [
  ...started,
  { type: "PicklistAccepted", key, picklistId: "pick_7", via: "run" },
];
const fired = (attempt: number): TimerFired => ({
  type: "oncely.timer.fired",
  key: shipmentCheckDueKey(id, attempt),
  name: SHIPMENT_CHECK,
  payload: { attempt },
  dueAt: NOW,
});
const requested = (attempt: number): ShipmentCheckEvent => ({
  type: "ShipmentCheckRequested",
  key: shipmentCheckKey(id, attempt),
  attempt,
  picklistKey: key,
});
const answer = (attempt: number, result: ShipmentCheckResult): OutcomeOf<typeof shipmentCheckEffect> => ({
  type: "oncely.effect.succeeded",
  key: shipmentCheckKey(id, attempt),
  kind: shipmentCheckEffect.kind,
  input: { orderId: id, picklistKey: key },
  result,
  attempt: 1,
  via: "run",
});
const answered = (attempt: number, result: ShipmentCheckResult["status"]): ShipmentCheckEvent => ({
  type: "ShipmentCheckAnswered",
  key: shipmentCheckKey(id, attempt),
  answer: result,
  via: "run",
});
const webhook: RecordShipment = {
  type: "RecordShipment",
  eventId: "warehouse:ship_9:shipped",
  shipmentId: "ship_9",
  occurredAt: "2026-01-01T00:00:05.000Z",
};
const shipped: ShipmentCheckResult = {
  status: "shipped",
  shipment: { eventId: webhook.eventId, shipmentId: webhook.shipmentId, occurredAt: webhook.occurredAt },
  adjustments: [],
};

describe("the shipment's check of an overdue webhook", () => {
  it("asks for its first check in the commit that records the picklist's acceptance", () => {
    const acceptance: OutcomeOf<typeof picklistEffect> = {
      type: "oncely.effect.succeeded",
      key,
      kind: "picklist",
      input: { orderId: id, lines },
      result: { picklistId: "pick_7" },
      attempt: 1,
      via: "run",
    };
    given(shipment, started, { id, now: NOW })
      .when(acceptance)
      .thenEffects([
        {
          kind: "oncely.timer",
          key: shipmentCheckDueKey(id, 1),
          input: { name: SHIPMENT_CHECK, payload: { attempt: 1 } },
          notBefore: NOW + AFTER,
        },
      ]);
  });

  it("asks the warehouse when it is due and the shipment has not come; a second firing asks nothing", () => {
    given(shipment, accepted, { id, now: NOW })
      .when(fired(1))
      .thenEffects([shipmentCheckEffect.request(shipmentCheckKey(id, 1), { orderId: id, picklistKey: key })]);
    given(shipment, accepted, { id, now: NOW })
      .when(fired(1))
      .then([requested(1)]);
    given(shipment, [...accepted, requested(1)], { id, now: NOW })
      .when(fired(1))
      .thenNothingHappened();
  });

  it("asks nothing when the webhook came first, nothing will ship, or the warehouse cancelled the picklist", () => {
    const { type: _, ...fields } = webhook;
    const recorded: ShipmentEventWithCheck = { type: "ShipmentRecorded", ...fields };
    given(shipment, [...accepted, recorded], { id, now: NOW })
      .when(fired(1))
      .thenNothingHappened();
    const cancelled: ShipmentEventWithCheck[] = [
      ...accepted,
      { type: "ShippingCancelRequested", key: `order:${id}:picklist-cancel` },
      { type: "PicklistCancelled", key: `order:${id}:picklist-cancel`, cancelled: ["pick_7"], via: "run" },
    ];
    given(shipment, cancelled, { id, now: NOW }).when(fired(1)).thenNothingHappened();
  });

  it("records a shipped answer by the webhook's own decision: the same events, the same OrderShipped under the same id", () => {
    const byWebhook = given(shipment, accepted, { id, now: NOW }).when(webhook).decision();
    const history = [...accepted, requested(1)];
    const byCheck = given(shipment, history, { id, now: NOW }).when(answer(1, shipped)).decision();
    expect(byCheck.events).toEqual([answered(1, "shipped"), ...(byWebhook.events ?? [])]);
    expect(byCheck.publish).toEqual(byWebhook.publish);
    expect(byCheck.publish?.map((p) => p.eventId)).toEqual([eventIds.orderShipped(id)]);
    expect(byCheck.effects ?? []).toEqual([]);

    // The webhook arriving after all is a duplicate: no event, nothing published.
    const after = [...history, ...((byCheck.events ?? []) as ShipmentEventWithCheck[])];
    const late = given(shipment, after, { id, now: NOW }).when(webhook).thenNothingHappened();
    expect(late.reply).toMatchObject({ duplicate: true, shipmentId: webhook.shipmentId });
    // And a straggling answer of the same check changes nothing.
    given(shipment, after, { id, now: NOW }).when(answer(1, shipped)).thenNothingHappened();
  });

  it("records the adjustments the warehouse reports before the shipment, which names them", () => {
    const adjustment = {
      eventId: "warehouse:adj_1:lines-unavailable",
      adjustmentId: "adj_1",
      lines: [{ sku: "book", quantity: 1 }],
    };
    const result: ShipmentCheckResult = { ...shipped, adjustments: [adjustment] };
    const decision = given(shipment, [...accepted, requested(1)], { id, now: NOW })
      .when(answer(1, result))
      .decision();
    expect(decision.events?.map((e) => e.type)).toEqual([
      "ShipmentCheckAnswered",
      "LinesReportedUnavailable",
      "ShipmentRecorded",
    ]);
    expect(decision.publish?.map((p) => p.type)).toEqual(["LinesUnavailable", "OrderShipped"]);
    expect(decision.publish?.[1]?.payload).toMatchObject({ adjustmentIds: ["adj_1"] });
  });

  it("asks again after twice the delay while the picklist waits to ship, at most MAX_SHIPMENT_CHECKS times", () => {
    let history = [...accepted, requested(1)];
    for (let attempt = 1; attempt < MAX_SHIPMENT_CHECKS; attempt++) {
      const decision = given(shipment, history, { id, now: NOW }).when(answer(attempt, { status: "accepted" }));
      decision.then([answered(attempt, "accepted")]);
      decision.thenEffects([
        {
          kind: "oncely.timer",
          key: shipmentCheckDueKey(id, attempt + 1),
          input: { name: SHIPMENT_CHECK, payload: { attempt: attempt + 1 } },
          notBefore: NOW + AFTER * 2 ** attempt,
        },
      ]);
      history = [...history, answered(attempt, "accepted"), requested(attempt + 1)];
    }
    given(shipment, history, { id, now: NOW })
      .when(answer(MAX_SHIPMENT_CHECKS, { status: "accepted" }))
      .thenEffects([]);
  });

  it("stops when the warehouse does not know the picklist, and leaves the rest to the order's shipment deadline", () => {
    const history = [...accepted, requested(1)];
    const failed: OutcomeOf<typeof shipmentCheckEffect> = {
      type: "oncely.effect.failed",
      key: shipmentCheckKey(id, 1),
      kind: shipmentCheckEffect.kind,
      input: { orderId: id, picklistKey: key },
      error: `the warehouse has no picklist under "${key}"`,
      attempt: 1,
      via: "run",
    };
    const decision = given(shipment, history, { id, now: NOW }).when(failed);
    decision.then([
      {
        type: "ShipmentCheckAnswered",
        key: shipmentCheckKey(id, 1),
        answer: "unknown-to-warehouse",
        reason: failed.error,
        via: "run",
      },
    ]);
    decision.thenEffects([]);
    given(shipment, history, { id, now: NOW })
      .when(answer(1, { status: "cancelled" }))
      .thenEffects([]);
  });

  it("refuses an answer it never asked for and a timer of another name", () => {
    given(shipment, accepted, { id, now: NOW }).when(answer(1, shipped)).thenThrows(CommandRejectedError);
    given(shipment, accepted, { id, now: NOW })
      .when({ ...fired(1), name: "other" })
      .thenThrows(CommandRejectedError);
  });
});
