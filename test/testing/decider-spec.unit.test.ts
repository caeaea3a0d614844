import { describe, expect, it } from "vitest";
import type { EffectRequest } from "../../src/index.js";
import { given, outcome } from "../../src/testing/index.js";
import { checkout, paymentKey } from "../host/fixtures/checkout.js";

const payment: EffectRequest = { kind: "payment", key: paymentKey("test"), input: { amount: 20 } };
const started = { type: "CheckoutStarted" as const, amount: 20 };

describe("given / when / then for deciders", () => {
  it("thenEffects: the decision requests exactly these effects", () => {
    given(checkout, []).when({ type: "Checkout", amount: 20 }).thenEffects([payment]);
    expect(() =>
      given(checkout, [])
        .when({ type: "Checkout", amount: 20 })
        .thenEffects([{ ...payment, input: { amount: 21 } }]),
    ).toThrow(/expected effects[\s\S]*"amount": 21[\s\S]*but decide returned[\s\S]*"amount": 20/);
  });

  it("an outcome built from the request reaches decide; thenPublishes and thenState check what follows", () => {
    const paid = given(checkout, [started]).when(outcome.succeeded(payment, { id: "ch_9" }));
    paid.then([{ type: "PaymentCompleted", paymentId: "ch_9" }]);
    paid.thenPublishes([
      {
        eventId: "checkout:test:paid",
        type: "CheckoutPaid",
        source: "checkout",
        aggregateId: "test",
        payload: { paymentId: "ch_9" },
      },
    ]);
    paid.thenState({ amount: 20, payment: "Completed", paymentId: "ch_9" });
    expect(() => paid.thenState({ amount: 20, payment: "Pending", paymentId: null })).toThrow(
      /expected state[\s\S]*but evolve made[\s\S]*"Completed"/,
    );
    expect(() => paid.thenPublishes([])).toThrow(/expected publications/);
  });

  it("a failure outcome carries the reason; thenReply checks the reply", () => {
    given(checkout, [started])
      .when(outcome.failed(payment, "card declined"))
      .then([{ type: "PaymentFailed", reason: "card declined" }]);
    const asked = given(checkout, [started]).when({ type: "Checkout", amount: 20 });
    asked.thenReply({ amount: 20, payment: "Pending", paymentId: null });
    expect(() => asked.thenReply(null)).toThrow(/expected reply\nnull\nbut decide returned/);
    given(checkout, []).when({ type: "Checkout", amount: 20 }).thenReply(undefined);
  });

  it("outcome builders match the commands the dispatcher sends", () => {
    expect(outcome.succeeded(payment, { id: "x" }, { via: "operator", settledBy: "ann", attempt: 3 })).toEqual({
      type: "oncely.effect.succeeded",
      key: payment.key,
      kind: "payment",
      input: { amount: 20 }, // the request's input, as the dispatcher copies it from the outbox row
      result: { id: "x" },
      attempt: 3,
      via: "operator",
      settledBy: "ann",
    });
    expect(outcome.unknown(payment)).toEqual({
      type: "oncely.effect.unknown",
      key: payment.key,
      kind: "payment",
      input: { amount: 20 },
      error: "timed out",
      attempt: 1,
    });
    expect(outcome.needsReconciliation(payment).type).toBe("oncely.effect.needs-reconciliation");
    const message = { to: "warehouse/main", id: "order:1:picklist", command: { type: "Pick" } };
    expect(outcome.delivered(message, { ok: true })).toEqual({
      type: "oncely.message.delivered",
      id: "order:1:picklist",
      to: "warehouse/main",
      reply: { ok: true },
    });
    expect(outcome.rejected(message, "no such order")).toMatchObject({
      type: "oncely.message.rejected",
      error: "no such order",
    });
    // A decider that ignores an outcome: thenSends sees no message.
    given(checkout, [started]).when(outcome.unknown(payment)).thenSends([]);
  });
});
