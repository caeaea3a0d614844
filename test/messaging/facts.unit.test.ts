import { describe, expect, it } from "vitest";
import { InvalidInputError } from "../../src/base/errors.js";
import { parseEnvelope } from "../../src/messaging/envelope.js";
import { derived, IllegalTransitionError, monotonic } from "../../src/messaging/facts.js";
import { subjectFor, subjectMatches } from "../../src/messaging/subjects.js";
import { orderEvent } from "./support/orders.js";

describe("monotonic facts", () => {
  const payment = monotonic(["Pending", ["Processed", "Failed"], "Refunded"] as const, "payment");

  it("moves forward, ignores backwards moves and repeats", () => {
    expect(payment.advance(undefined, "Processed")).toEqual({ value: "Processed", changed: true, backwards: false });
    expect(payment.advance("Pending", "Processed")).toEqual({ value: "Processed", changed: true, backwards: false });
    expect(payment.advance("Processed", "Pending")).toEqual({ value: "Processed", changed: false, backwards: true });
    expect(payment.advance("Processed", "Processed")).toEqual({ value: "Processed", changed: false, backwards: false });
    expect(payment.advance("Failed", "Refunded").value).toBe("Refunded");
  });

  it("rejects a move between alternatives of one step with a clear error", () => {
    expect(() => payment.advance("Processed", "Failed")).toThrow(IllegalTransitionError);
    expect(() => payment.advance("Processed", "Failed")).toThrow(/payment from "Processed" to "Failed"/);
  });

  it("rejects unknown values and duplicated order entries", () => {
    expect(() => payment.advance("Pending", "Lost" as never)).toThrow(InvalidInputError);
    expect(() => monotonic(["A", "B", "A"])).toThrow(/twice/);
  });

  it("derives a summary status from facts, first rule wins", () => {
    const status = derived<{ paid: boolean; shipped: boolean }, string>(
      [
        ["Shipped", (f) => f.shipped],
        ["Paid", (f) => f.paid],
      ],
      "Pending",
    );
    expect(status({ paid: false, shipped: true })).toBe("Shipped");
    expect(status({ paid: true, shipped: false })).toBe("Paid");
    expect(status({ paid: false, shipped: false })).toBe("Pending");
  });
});

describe("envelope and subjects", () => {
  it("validates envelopes with the schema's issues in the message", () => {
    const good = orderEvent("o1", 2);
    expect(parseEnvelope(good)).toEqual(good);
    expect(() => parseEnvelope({ ...good, eventId: "" })).toThrow(/eventId/);
    expect(() => parseEnvelope({ ...good, aggregateVersion: 0 })).toThrow(/aggregateVersion/);
    expect(() => parseEnvelope("nope")).toThrow(InvalidInputError);
  });

  it("names subjects <prefix>.<source>.<type> and matches NATS wildcards", () => {
    expect(subjectFor("shop", { source: "payment", type: "PaymentProcessed" })).toBe("shop.payment.PaymentProcessed");
    expect(subjectFor("shop", { source: "a.b", type: "X>" })).toBe("shop.a_b.X_");
    expect(subjectMatches("shop.>", "shop.payment.PaymentProcessed")).toBe(true);
    expect(subjectMatches("shop.*.OrderShipped", "shop.shipping.OrderShipped")).toBe(true);
    expect(subjectMatches("shop.*", "shop.shipping.OrderShipped")).toBe(false);
    expect(subjectMatches("shop.>", "shop")).toBe(false);
  });
});
