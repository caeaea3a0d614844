import type { Decision, Envelope, Typed } from "oncely";
import { given } from "oncely/testing";
import { describe, expect, it } from "vitest";
import { cancelShippingId, fulfillment, fulfillmentDone } from "../fulfillment/process.js";
import { picklistCancelKey, shipmentActor } from "../shipping/actor.js";
import { decide, envelope, id, placed, processed } from "./fixtures.js";

/** Shipping and the fulfillment process answering a cancellation, and Shipping giving up on an out-of-stock picklist. */

const cancelled = envelope("OrderCancelled", "ordering", 2, { orderId: id, reason: "changed my mind" });
const start = { type: "StartShipping" as const, orderId: id, lines: [{ sku: "book", quantity: 2 }] };
/** A failed outcome as the dispatcher sends it: the kind is the requested effect's (outcomes are routed by kind). */
const failed = (key: string, error: string, kind = "picklist") =>
  ({ type: "oncely.effect.failed", key, kind, attempt: 1, via: "run", error }) as Typed;

describe("fulfillment process: a cancelled order", () => {
  const react = (events: Typed[], e: Envelope) =>
    decide(fulfillment.actor, events, { type: "oncely.process.event", envelope: e } as Typed);
  const reactAll = (...envelopes: Envelope[]) =>
    envelopes.reduce<{ events: Typed[]; last: Decision }>(
      ({ events }, e) => {
        const last = react(events, e);
        return { events: [...events, ...(last.events ?? [])], last };
      },
      { events: [], last: {} },
    );

  it("never starts shipping when the cancel came first, whatever arrives after", () => {
    for (const order of [
      [placed, cancelled, processed],
      [cancelled, processed, placed],
    ]) {
      const { events } = reactAll(...order);
      expect(events.map((e) => e.type)).not.toContain("ShippingRequested");
      expect(fulfillmentDone(given(fulfillment.actor, events as never[], { id }).state)).toBe(true);
    }
  });

  it("sends CancelShipping once when shipping had started", () => {
    const { events, last } = reactAll(placed, processed, cancelled);
    expect(last.send).toEqual([
      { to: "shipment/42", id: cancelShippingId(id), command: { type: "CancelShipping", orderId: id } },
    ]);
    expect(react(events, cancelled).send ?? []).toEqual([]);
  });
});

describe("shipping context: cancel and out of stock", () => {
  it("asks the warehouse to cancel the picklist once; a StartShipping delivered after it sends nothing", () => {
    const started = decide(shipmentActor, [], start).events ?? [];
    const cancel = decide(shipmentActor, started, { type: "CancelShipping", orderId: id } as Typed);
    expect(cancel.effects).toEqual([{ kind: "picklist-cancel", key: picklistCancelKey(id), input: { orderId: id } }]);
    const history = [...started, ...(cancel.events ?? [])];
    expect(decide(shipmentActor, history, { type: "CancelShipping", orderId: id } as Typed).effects ?? []).toEqual([]);
    const early = decide(shipmentActor, [], { type: "CancelShipping", orderId: id } as Typed).events ?? [];
    expect(decide(shipmentActor, early, start).effects ?? []).toEqual([]);
  });

  it("records the warehouse's refusal to cancel (already shipped) without asking again", () => {
    const started = decide(shipmentActor, [], start).events ?? [];
    const cancel = decide(shipmentActor, started, { type: "CancelShipping", orderId: id } as Typed).events ?? [];
    const refused = decide(
      shipmentActor,
      [...started, ...cancel],
      failed(picklistCancelKey(id), "already shipped", "picklist-cancel"),
    );
    expect(refused.events).toEqual([
      { type: "PicklistCancelRefused", key: picklistCancelKey(id), reason: "already shipped", via: "run" },
    ]);
    expect(refused.effects ?? []).toEqual([]);
  });

  it("gives up at once on out of stock and publishes PicklistRejected, asking no new key", () => {
    const started = decide(shipmentActor, [], start).events ?? [];
    const decision = decide(
      shipmentActor,
      started,
      failed("order:42:picklist", "provider rejected the request (422): out of stock: book"),
    );
    expect(decision.effects ?? []).toEqual([]);
    expect(decision.events?.map((e) => e.type)).toEqual(["PicklistRejected", "ShippingGivenUp"]);
    expect(decision.publish).toEqual([
      expect.objectContaining({
        type: "PicklistRejected",
        eventId: "shipment:42:picklist-rejected",
      }),
    ]);
  });

  it("records the warehouse's shortage once per adjustment and publishes LinesUnavailable; refuses one for an order never started", () => {
    const report = {
      type: "RecordLinesUnavailable",
      eventId: "warehouse:adj_1:lines-unavailable",
      adjustmentId: "adj_1",
      lines: [{ sku: "book", quantity: 1 }],
    };
    const started = decide(shipmentActor, [], start).events ?? [];
    const decision = decide(shipmentActor, started, report);
    expect(decision.events).toEqual([
      { type: "LinesReportedUnavailable", eventId: report.eventId, adjustmentId: "adj_1", lines: report.lines },
    ]);
    expect(decision.publish).toEqual([
      expect.objectContaining({
        type: "LinesUnavailable",
        eventId: "shipment:42:lines-unavailable:adj_1",
        payload: { orderId: id, adjustmentId: "adj_1", lines: report.lines },
      }),
    ]);
    // The same adjustment again (another delivery id): nothing recorded, nothing published.
    const again = decide(shipmentActor, [...started, ...(decision.events ?? [])], {
      ...report,
      eventId: "other",
    } as Typed);
    expect([again.events ?? [], again.publish ?? []]).toEqual([[], []]);
    expect(() => decide(shipmentActor, [], report)).toThrow(/shipping never started/);
  });
});
