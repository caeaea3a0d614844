import { given } from "oncely/testing";
import { describe, expect, it } from "vitest";
import { checkout, main } from "./checkout.js";

describe("quickstart (quoted in the README)", () => {
  it("charges once and records the payment id", async () => {
    const { state, charges } = await main();
    expect(state).toEqual({ amount: 1999, payment: "Completed", paymentId: "ch_1" });
    expect(charges).toBe(1);
  });

  it("a second Checkout starts nothing new", () => {
    given(checkout, [{ type: "CheckoutStarted", amount: 5 }])
      .when({ type: "Checkout", amount: 5 })
      .thenNothingHappened();
  });
});
