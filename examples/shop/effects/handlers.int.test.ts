import type { RunContext } from "oncely";
import { errors } from "oncely";
import { SimulatedClock } from "oncely/testing";
import { afterEach, describe, expect, it } from "vitest";
import type { PaymentInput } from "../ordering/effects.js";
import { startEmailProvider } from "../providers/email/server.js";
import { startPaymentProvider } from "../providers/payment/server.js";
import { startWarehouseProvider } from "../providers/warehouse/server.js";
import { createEmailHandler } from "./email-handler.js";
import { ProviderUnavailableError } from "./http.js";
import { createPaymentHandler } from "./payment-handler.js";
import { createPicklistHandler } from "./picklist-handler.js";
import { createRefundHandler } from "./refund-handler.js";
import { createShipmentCheckHandler } from "./shipment-check-handler.js";

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});
async function payment(options: Parameters<typeof startPaymentProvider>[0] = {}) {
  const provider = await startPaymentProvider(options);
  closers.push(provider.close);
  return provider;
}

const context = (idempotencyKey: string, signal = new AbortController().signal): RunContext => ({
  idempotencyKey,
  attempt: 1,
  signal,
  kind: "test",
  owner: "order/42",
});
const lookupContext = <I>(input: I) => ({ signal: new AbortController().signal, input });
const input: PaymentInput = { orderId: "42", amount: 2800, currency: "EUR" };
const key = "order:42:payment";

describe("payment handler", () => {
  it("succeeds with the provider's paymentId, and a rerun with the same key gets the same one", async () => {
    const provider = await payment();
    const handler = createPaymentHandler({ baseUrl: provider.url });
    const first = await handler.run(input, context(key));
    expect(first).toEqual({ outcome: "succeeded", result: { paymentId: provider.ledger.charges[0]?.paymentId } });
    expect(await handler.run(input, context(key))).toEqual(first);
    expect(provider.ledger.charges).toHaveLength(1);
    expect(handler.kind).toBe("payment");
    expect(handler.policy?.providerDedups).toBe(true);
  });

  it("reports a decline as a definite failure with the provider's reason", async () => {
    const provider = await payment({ declineAmountsEndingWith: "00" });
    const handler = createPaymentHandler({ baseUrl: provider.url });
    expect(await handler.run(input, context(key))).toEqual({
      outcome: "failed",
      reason: expect.stringContaining("declined"),
    });
    expect(await handler.lookup?.(key, lookupContext(input))).toEqual({
      outcome: "failed",
      reason: expect.stringContaining("declined"),
    });
  });

  it("treats 409 as ambiguous (throws), and its lookup refuses a charge made for another request", async () => {
    const provider = await payment();
    const handler = createPaymentHandler({ baseUrl: provider.url });
    await handler.run(input, context(key));
    const other = { ...input, amount: 999 };
    await expect(handler.run(other, context(key))).rejects.toBeInstanceOf(errors.IdempotencyKeyReusedError);
    await expect(handler.lookup?.(key, lookupContext(other))).rejects.toBeInstanceOf(errors.IdempotencyKeyReusedError);
    expect(provider.ledger.charges).toHaveLength(1);
  });

  it("throws on 5xx: ambiguous, nothing is declared failed", async () => {
    const provider = await payment({ faults: { failRate: 1 } });
    const handler = createPaymentHandler({ baseUrl: provider.url });
    const error = await handler.run(input, context(key)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ProviderUnavailableError);
    expect((error as ProviderUnavailableError).status).toBe(503);
    expect(await handler.lookup?.(key, lookupContext(input))).toEqual({ outcome: "not-found" });
  });

  it("throws when the answer is lost after the charge, and lookup then finds that charge", async () => {
    const provider = await payment({ faults: { dropAfterRate: 1 } });
    const handler = createPaymentHandler({ baseUrl: provider.url });
    await expect(handler.run(input, context(key))).rejects.toBeInstanceOf(ProviderUnavailableError);
    expect(await handler.lookup?.(key, lookupContext(input))).toEqual({
      outcome: "succeeded",
      result: { paymentId: provider.ledger.charges[0]?.paymentId },
    });
  });

  it("rethrows the dispatcher's abort reason when its timeout fires, though the provider charged", async () => {
    const provider = await payment({ faults: { slowRate: 1, slowMs: 60_000 } });
    const handler = createPaymentHandler({ baseUrl: provider.url });
    const controller = new AbortController();
    const timeout = new Error("effect handler did not answer within 100 ms");
    const running = handler.run(input, context(key, controller.signal));
    await expect.poll(() => provider.ledger.charges.length).toBe(1);
    controller.abort(timeout);
    await expect(running).rejects.toBe(timeout);
  });

  it("throws when the provider cannot be reached", async () => {
    const provider = await payment();
    const handler = createPaymentHandler({ baseUrl: provider.url });
    await provider.close();
    await expect(handler.run(input, context(key))).rejects.toBeInstanceOf(ProviderUnavailableError);
    await expect(handler.lookup?.(key, lookupContext(input))).rejects.toBeInstanceOf(ProviderUnavailableError);
  });

  it("reports a request the provider refuses (400) as failed, naming the field", async () => {
    const provider = await payment();
    const handler = createPaymentHandler({ baseUrl: provider.url });
    expect(await handler.run({ ...input, currency: "euro" }, context(key))).toEqual({
      outcome: "failed",
      reason: expect.stringContaining("currency"),
    });
  });

  it("with providerDedups: false declares the policy, and lookup finds the latest of repeated charges", async () => {
    const provider = await payment({ faults: { noIdempotency: true } });
    const handler = createPaymentHandler({ baseUrl: provider.url, providerDedups: false });
    expect(handler.policy?.providerDedups).toBe(false);
    await handler.run(input, context(key));
    const second = await handler.run(input, context(key));
    // What a blind retry costs against such a provider: two charges. Hence providerDedups: false.
    expect(provider.ledger.charges).toHaveLength(2);
    expect(await handler.lookup?.(key, lookupContext(input))).toEqual(second);
  });
});

describe("email handler", () => {
  it("sends once per key, looks the mail up, and refuses a lookup of a mail with other content", async () => {
    const provider = await startEmailProvider();
    closers.push(provider.close);
    const handler = createEmailHandler({ baseUrl: provider.url });
    const mail = { to: "ada@example.com", template: "order-confirmation", orderId: "42" };
    const sent = await handler.run(mail, context("order:42:confirmation-email"));
    expect(sent).toEqual({ outcome: "succeeded", result: { messageId: provider.ledger.emails[0]?.messageId } });
    expect(await handler.run(mail, context("order:42:confirmation-email"))).toEqual(sent);
    expect(await handler.lookup?.("order:42:confirmation-email", lookupContext(mail))).toEqual(sent);
    expect(await handler.lookup?.("order:42:shipping-email", lookupContext(mail))).toEqual({ outcome: "not-found" });
    await expect(
      handler.lookup?.("order:42:confirmation-email", lookupContext({ ...mail, to: "bob@example.com" })),
    ).rejects.toBeInstanceOf(errors.IdempotencyKeyReusedError);
    expect(provider.ledger.emails).toHaveLength(1);
    expect(handler.kind).toBe("email");
  });
});

describe("picklist handler", () => {
  it("sends the picklist once per key and looks it up, before and after shipping", async () => {
    // No shop listens here: one webhook attempt is enough, the test only needs the shipment.
    const warehouse = await startWarehouseProvider({
      shipDelayMs: 5,
      webhook: { maxAttempts: 1 },
      webhookSecret: "handlers-test-webhook-secret",
    });
    closers.push(warehouse.close);
    const handler = createPicklistHandler({ baseUrl: warehouse.url });
    const picklist = { orderId: "42", lines: [{ sku: "book", quantity: 2 }] };
    const accepted = await handler.run(picklist, context("order:42:picklist"));
    expect(accepted).toEqual({
      outcome: "succeeded",
      result: { picklistId: warehouse.ledger.picklists[0]?.picklistId },
    });
    expect(await handler.run(picklist, context("order:42:picklist"))).toEqual(accepted);
    await warehouse.settled();
    expect(warehouse.ledger.shipments).toHaveLength(1);
    expect(await handler.lookup?.("order:42:picklist", lookupContext(picklist))).toEqual(accepted);
    expect(handler.kind).toBe("picklist");
  });
});

describe("shipment check handler", () => {
  it("answers accepted, then shipped with the webhook's ids and time; failed for an unknown picklist; refuses another order's", async () => {
    // A clock that moves only when told: the picklist ships when the test says so.
    const clock = new SimulatedClock();
    const warehouse = await startWarehouseProvider({
      clock,
      shipDelayMs: 5,
      webhook: { maxAttempts: 1 },
      webhookSecret: "handlers-test-webhook-secret",
    });
    closers.push(warehouse.close);
    await createPicklistHandler({ baseUrl: warehouse.url }).run(
      { orderId: "42", lines: [{ sku: "book", quantity: 2 }] },
      context("order:42:picklist"),
    );
    const handler = createShipmentCheckHandler({ baseUrl: warehouse.url });
    expect(handler.kind).toBe("shipment-check");
    expect(handler.policy?.providerDedups).toBe(true);
    const input = { orderId: "42", picklistKey: "order:42:picklist" };
    const key = "order:42:shipment-check:1";
    expect(await handler.run(input, context(key))).toEqual({ outcome: "succeeded", result: { status: "accepted" } });

    clock.advance(5);
    await warehouse.settled();
    const shipment = warehouse.ledger.shipments[0];
    const shipped = {
      outcome: "succeeded",
      result: {
        status: "shipped",
        shipment: { eventId: shipment?.eventId, shipmentId: shipment?.shipmentId, occurredAt: shipment?.at },
        adjustments: [],
      },
    };
    expect(await handler.run(input, context(key))).toEqual(shipped);
    expect(await handler.lookup?.(key, lookupContext(input))).toEqual(shipped);

    const unknown = { orderId: "42", picklistKey: "order:42:picklist:2" };
    const missing = { outcome: "failed", reason: expect.stringContaining("no picklist under") };
    expect(await handler.run(unknown, context(key))).toEqual(missing);
    // A lookup finding nothing says so; the run after it (a read, safe to repeat) answers the failure.
    expect(await handler.lookup?.(key, lookupContext(unknown))).toEqual({ outcome: "not-found" });
    await expect(handler.run({ ...input, orderId: "43" }, context(key))).rejects.toThrow(
      errors.IdempotencyKeyReusedError,
    );
  });
});

describe("refund handler", () => {
  /** A provider holding a charge of 2800 for order 42, and the refund input of all of it. */
  async function chargedProvider(options: Parameters<typeof startPaymentProvider>[0] = {}) {
    const provider = await payment(options);
    const charge = await createPaymentHandler({ baseUrl: provider.url }).run(input, context(key));
    if (charge.outcome !== "succeeded") throw new Error("the charge failed");
    return { provider, refund: { paymentId: charge.result.paymentId, amount: 2800 } };
  }
  const refundKey = "order:42:refund";

  it("succeeds with the provider's refundId, and a rerun with the same key refunds nothing more", async () => {
    const { provider, refund } = await chargedProvider();
    const handler = createRefundHandler({ baseUrl: provider.url });
    const first = await handler.run(refund, context(refundKey));
    expect(first).toEqual({ outcome: "succeeded", result: { refundId: provider.ledger.refunds[0]?.refundId } });
    expect(await handler.run(refund, context(refundKey))).toEqual(first);
    expect(provider.ledger.refunds).toHaveLength(1);
    expect(handler.kind).toBe("refund");
  });

  it("reports a refund past the charge as a definite failure, and lookup finds nothing under its key", async () => {
    const { provider, refund } = await chargedProvider();
    const handler = createRefundHandler({ baseUrl: provider.url });
    const over = { ...refund, amount: 2801 };
    expect(await handler.run(over, context(refundKey))).toEqual({
      outcome: "failed",
      reason: expect.stringContaining("exceeds"),
    });
    expect(await handler.lookup?.(refundKey, lookupContext(over))).toEqual({ outcome: "not-found" });
  });

  it("throws when the answer is lost after the refund; lookup finds it, and refuses another payment's", async () => {
    const { provider, refund } = await chargedProvider({ faults: { noIdempotency: true } });
    provider.setFaults({ dropAfterRate: 1 });
    const handler = createRefundHandler({ baseUrl: provider.url, providerDedups: false });
    await expect(handler.run(refund, context(refundKey))).rejects.toBeInstanceOf(ProviderUnavailableError);
    expect(await handler.lookup?.(refundKey, lookupContext(refund))).toEqual({
      outcome: "succeeded",
      result: { refundId: provider.ledger.refunds[0]?.refundId },
    });
    await expect(handler.lookup?.(refundKey, lookupContext({ ...refund, amount: 1 }))).rejects.toBeInstanceOf(
      errors.IdempotencyKeyReusedError,
    );
    expect(provider.ledger.refunds).toHaveLength(1);
    expect(handler.policy?.providerDedups).toBe(false);
  });
});
