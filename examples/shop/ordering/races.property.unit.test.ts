import fc from "fast-check";
import type { EffectOutcome, EffectRequest } from "oncely";
import { CommandRejectedError } from "oncely";
import { describe, expect, it } from "vitest";
import { propertyRuns } from "../../../test/support/property-runs.js";
import { orderActor } from "./actor.js";
import type { OrderCommand } from "./commands.js";
import { EFFECT_KINDS } from "./effects.js";
import { bookAndPen, id, orderContext } from "./fixtures.js";
import { refundKey } from "./refunds.js";
import type { OrderState } from "./state.js";
import { deriveStatus } from "./status.js";

/**
 * The race rules of cancellation and out-of-stock, as a property: for any world (the payment
 * succeeds or fails; the warehouse ships, refuses the picklist, or ships all but one line; the
 * customer cancels or not) and any interleaving and duplication of what the order hears (payment
 * outcome, cancel, picklist answer, shortage, shipment, and the outcomes of the effects it asked
 * for), once every effect asked for has completed the order ends in an allowed state:
 *
 * - shipped and not refunded in full;
 * - refunded in full and not shipped;
 * - shipped and refunded in full only when recorded as shipped before the cancel;
 *
 * and its refunds add up to exactly what the world calls for, each key asked for once.
 */

const context = orderContext;
const placeOrder = bookAndPen;
const AMOUNT = 2800;
const PEN = 300;

type Warehouse = "ships" | "rejects" | "short";
interface World {
  paid: boolean;
  warehouse: Warehouse;
  cancels: boolean;
}

/** What the order may hear in this world, each at least once. */
function messages(world: World): OrderCommand[] {
  const out: OrderCommand[] = [placeOrder];
  out.push(
    world.paid
      ? { type: "RecordPaymentProcessed", eventId: "payment:42:processed", paymentId: "pay_1" }
      : { type: "RecordPaymentFailed", eventId: "payment:42:failed", reason: "declined" },
  );
  if (world.cancels) out.push({ type: "CancelOrder", reason: "changed my mind" });
  // The warehouse only ever hears of a paid order.
  if (!world.paid) return out;
  if (world.warehouse === "rejects") {
    out.push({ type: "RecordPicklistRejected", eventId: "shipment:42:picklist-rejected", reason: "out of stock" });
    return out;
  }
  out.push({ type: "RecordPicklistAccepted", eventId: "shipment:42:picklist-accepted", picklistId: "pick_1" });
  if (world.warehouse === "short") {
    out.push({
      type: "RecordLinesUnavailable",
      eventId: "shipment:42:lines-unavailable:adj-1",
      adjustmentId: "adj-1",
      lines: [{ sku: "pen", quantity: 1 }],
    });
  }
  out.push({
    type: "RecordOrderShipped",
    eventId: "shipment:42:shipped",
    shipmentId: "ship_1",
    warehouseEventId: "wh-1",
    shippedAt: "2026-01-02T10:00:00.000Z",
  });
  return out;
}

const succeeded = (effect: EffectRequest): EffectOutcome => ({
  type: "oncely.effect.succeeded",
  key: effect.key,
  kind: effect.kind,
  result: effect.kind === EFFECT_KINDS.refund ? { refundId: `ref-${effect.key}` } : { messageId: `m-${effect.key}` },
  attempt: 1,
  via: "run",
});

const worldArb: fc.Arbitrary<World> = fc.record({
  paid: fc.boolean(),
  warehouse: fc.constantFrom<Warehouse>("ships", "rejects", "short"),
  cancels: fc.boolean(),
});

/** A world, and the order its messages arrive in (with repeats), interleaved with effect completions. */
const scenarioArb = worldArb.chain((world) => {
  const all = messages(world);
  return fc.record({
    world: fc.constant(world),
    arrival: fc.shuffledSubarray(all, { minLength: all.length, maxLength: all.length }),
    repeats: fc.array(fc.nat({ max: all.length - 1 }), { maxLength: 4 }),
    // After each message: how many of the pending effects complete (the oldest first).
    completions: fc.array(fc.nat({ max: 3 }), { minLength: all.length + 4, maxLength: all.length + 4 }),
  });
});

function run({ arrival, repeats, completions }: { arrival: OrderCommand[]; repeats: number[]; completions: number[] }) {
  let state = orderActor.initialState(id);
  let version = 0;
  const pending: EffectRequest[] = [];
  const started: string[] = [];
  const send = (command: OrderCommand | EffectOutcome) => {
    let decision: ReturnType<typeof orderActor.decide>;
    try {
      decision = orderActor.decide(command, state, context(version));
    } catch (error) {
      // Only a cancel can be refused here: before the order exists, or after it shipped.
      expect(error).toBeInstanceOf(CommandRejectedError);
      expect(command.type).toBe("CancelOrder");
      return;
    }
    for (const event of decision.events ?? []) {
      state = orderActor.evolve(state, event);
      version++;
    }
    for (const effect of decision.effects ?? []) {
      expect(started).not.toContain(effect.key);
      started.push(effect.key);
      pending.push(effect);
    }
  };
  const script = [...arrival, ...repeats.map((i) => arrival[i] as OrderCommand)];
  script.forEach((command, i) => {
    send(command);
    for (const effect of pending.splice(0, completions[i] ?? 0)) send(succeeded(effect));
  });
  // Every effect asked for completes in the end (its completion may ask for more).
  while (pending.length > 0) send(succeeded(pending.shift() as EffectRequest));
  return { state, started };
}

const refunded = (state: OrderState) =>
  state.refunds.filter((r) => r.status === "Completed").reduce((sum, r) => sum + r.amount, 0);

describe("order races: payment, cancel, picklist answer and shipment in any order", () => {
  it("ends shipped and not refunded, refunded and not shipped, or both only when recorded shipped-before-cancel", () => {
    const seen = new Set<string>();
    fc.assert(
      fc.property(scenarioArb, ({ world, ...scenario }) => {
        const { state, started } = run(scenario);
        const shipped = state.shipping.status === "Completed";
        const fullRefund = state.refunds.find((r) => r.key === refundKey(id));
        const cancelled = state.cancellation !== null;
        seen.add(`${shipped}/${fullRefund !== undefined}/${state.cancellation?.shippedBeforeCancel ?? "-"}`);

        // The allowed final states.
        if (shipped && fullRefund) expect(state.cancellation?.shippedBeforeCancel).toBe(true);
        if (state.cancellation?.shippedBeforeCancel) expect(shipped).toBe(true);
        // Refunds add up to what the world calls for, never more than the charge, never without one.
        if (!world.paid) expect(state.refunds).toEqual([]);
        else if (cancelled || world.warehouse === "rejects") expect(refunded(state)).toBe(AMOUNT);
        else expect(refunded(state)).toBe(world.warehouse === "short" ? PEN : 0);
        expect(refunded(state)).toBeLessThanOrEqual(world.paid ? AMOUNT : 0);
        // Each refund and mail key asked for once (checked in run); one cancellation mail per cancelled order.
        expect(started.filter((k) => k === `order:${id}:cancellation-email`)).toHaveLength(cancelled ? 1 : 0);
        // No mail about a purchase or shipment the customer cancelled before it was due.
        if (cancelled && state.cancellation?.paymentStatus !== "Completed") {
          expect(started).not.toContain(`order:${id}:confirmation-email`);
        }
        if (cancelled) expect(started).not.toContain(`order:${id}:shipping-email`);
        // Everything settled: the status is final.
        const status = deriveStatus(state);
        expect(["completed", "cancelled", "out_of_stock", "payment_failed"]).toContain(status);
        if (cancelled) expect(status).toBe("cancelled");
      }),
      { numRuns: propertyRuns(250, 1000), seed: 20261201 },
    );
    // The property reached each outcome: shipped only, refunded only, and shipped before the cancel.
    expect(seen).toContain("true/false/-");
    expect(seen).toContain("false/true/false");
    expect(seen).toContain("true/true/true");
  });
});
