import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type PaymentProvider, type PaymentProviderOptions, startPaymentProvider } from "./payment/server.js";
import { get, post } from "./test-http.js";

const started: PaymentProvider[] = [];
async function start(options: PaymentProviderOptions = {}) {
  const provider = await startPaymentProvider(options);
  started.push(provider);
  return provider;
}
afterEach(async () => {
  await Promise.all(started.splice(0).map((p) => p.close()));
});

/** A provider with one charge of 2800 for order 42. */
async function charged(options: PaymentProviderOptions = {}) {
  const provider = await start(options);
  const { body } = await post(
    provider.url,
    "/payments",
    { orderId: "42", amount: 2800, currency: "EUR" },
    { key: "p" },
  );
  return { provider, paymentId: (body as { paymentId: string }).paymentId };
}

describe("payment provider refunds", () => {
  it("refunds once per Idempotency-Key, answers the same refundId again, and records one ledger entry", async () => {
    const { provider, paymentId } = await charged();
    const first = await post(provider.url, "/refunds", { paymentId, amount: 2800 }, { key: "order:42:refund" });
    const again = await post(provider.url, "/refunds", { paymentId, amount: 2800 }, { key: "order:42:refund" });
    expect(first).toEqual({ status: 201, body: { refundId: expect.any(String), status: "refunded", amount: 2800 } });
    expect(again).toEqual(first);
    expect(provider.ledger.refunds).toEqual([
      expect.objectContaining({
        paymentId,
        amount: 2800,
        orderId: "42",
        currency: "EUR",
        idempotencyKey: "order:42:refund",
      }),
    ]);
  });

  it("refuses (422) a refund past what is left of the charge, and one of an unknown payment", async () => {
    const { provider, paymentId } = await charged();
    expect((await post(provider.url, "/refunds", { paymentId, amount: 1000 }, { key: "a" })).status).toBe(201);
    const over = await post(provider.url, "/refunds", { paymentId, amount: 1801 }, { key: "b" });
    expect(over).toEqual({ status: 422, body: { status: "refused", reason: expect.stringContaining("1800 of 2800") } });
    const unknown = await post(provider.url, "/refunds", { paymentId: "pay_x", amount: 1 }, { key: "c" });
    expect(unknown.status).toBe(422);
    expect(provider.ledger.refunds.map((r) => r.amount)).toEqual([1000]);
  });

  it("answers 409 for the same key with another amount, and 400 naming each bad field", async () => {
    const { provider, paymentId } = await charged();
    await post(provider.url, "/refunds", { paymentId, amount: 100 }, { key: "k" });
    expect((await post(provider.url, "/refunds", { paymentId, amount: 200 }, { key: "k" })).status).toBe(409);
    const bad = await post(provider.url, "/refunds", { paymentId: "", amount: 1.5 });
    expect(bad.status).toBe(400);
    expect((bad.body as { error: string }).error).toMatch(/Idempotency-Key.*paymentId.*amount/);
    expect(provider.ledger.refunds).toHaveLength(1);
  });

  it("looks a refund up by key: 200 with the refund, 404 for an unknown key", async () => {
    const { provider, paymentId } = await charged();
    const { body } = await post(provider.url, "/refunds", { paymentId, amount: 300 }, { key: "order:42:refund:adj-1" });
    expect(await get(provider.url, `/refunds?idempotencyKey=${encodeURIComponent("order:42:refund:adj-1")}`)).toEqual({
      status: 200,
      body: { ...(body as object), paymentId, orderId: "42", currency: "EUR" },
    });
    expect((await get(provider.url, "/refunds?idempotencyKey=nope")).status).toBe(404);
  });

  it("noIdempotency: the same key refunds again, as long as something is left of the charge", async () => {
    const { provider, paymentId } = await charged({ faults: { noIdempotency: true } });
    expect((await post(provider.url, "/refunds", { paymentId, amount: 1400 }, { key: "r" })).status).toBe(201);
    expect((await post(provider.url, "/refunds", { paymentId, amount: 1400 }, { key: "r" })).status).toBe(201);
    expect((await post(provider.url, "/refunds", { paymentId, amount: 1400 }, { key: "r" })).status).toBe(422);
    expect(provider.ledger.refunds).toHaveLength(2);
  });

  it("dropAfterRate: refunds, then resets the connection; the ledger has the refund", async () => {
    const { provider, paymentId } = await charged();
    provider.setFaults({ dropAfterRate: 1 });
    await expect(post(provider.url, "/refunds", { paymentId, amount: 2800 }, { key: "r" })).rejects.toThrow();
    expect(provider.ledger.refunds).toHaveLength(1);
  });

  it("persists refunds: a restarted provider still knows the key and what is left", async () => {
    const dir = mkdtempSync(join(tmpdir(), "refunds-"));
    try {
      const ledgerPath = join(dir, "payment.jsonl");
      const { provider, paymentId } = await charged({ ledgerPath });
      const first = await post(provider.url, "/refunds", { paymentId, amount: 2000 }, { key: "r" });
      await provider.close();
      started.splice(started.indexOf(provider), 1);
      const restarted = await start({ ledgerPath });
      expect(await post(restarted.url, "/refunds", { paymentId, amount: 2000 }, { key: "r" })).toEqual(first);
      expect((await post(restarted.url, "/refunds", { paymentId, amount: 801 }, { key: "s" })).status).toBe(422);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
