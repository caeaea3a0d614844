import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ArmableFaults } from "oncely/testing";
import { afterEach, describe, expect, it } from "vitest";
import { type PaymentProvider, startPaymentProvider } from "../../examples/shop/providers/payment/server.js";
import type { OrderView } from "../../examples/shop/service/order-view.js";
import { type Shop, startShop } from "../../examples/shop/service/shop.js";

// The crash the refund effect exists for: the provider has refunded, the shop has not recorded it.
// Every time a new refund lands in the payment provider's ledger, the dispatcher fails at
// `dispatch.afterProvider`, before the outcome is written; the shop must carry on and record that
// refund without a second one, whether the provider dedups by key (run again, same refundId) or not
// (looked up by key, never run again).

const started: { shop: Shop; payment: PaymentProvider; dir: string }[] = [];
afterEach(async () => {
  for (const { shop, payment, dir } of started.splice(0)) {
    await shop.close();
    await payment.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

async function crashingShop(dedups: boolean) {
  const dir = mkdtempSync(join(tmpdir(), "oncely-refund-crash-"));
  const payment = await startPaymentProvider({ faults: { noIdempotency: !dedups } });
  const faults = new ArmableFaults();
  let crashes = 0;
  let seen = 0;
  faults.arm("dispatch.afterProvider", {
    times: Number.POSITIVE_INFINITY,
    action: (point) => {
      // Only right after a refund the provider has just made (charges and mails pass).
      if (payment.ledger.refunds.length === seen) return;
      seen = payment.ledger.refunds.length;
      crashes++;
      throw new Error(`injected crash at ${point}`);
    },
  });
  const shop = await startShop({
    port: 0,
    databaseUrl: `sqlite:${join(dir, "shop.db")}`,
    dataDir: dir,
    effectTimeoutMs: 1000,
    paymentUrl: payment.url,
    paymentDedups: dedups,
    faults,
  });
  started.push({ shop, payment, dir });
  return { shop, payment, crashes: () => crashes };
}

async function call(shop: Shop, method: string, path: string, body: unknown, key: string) {
  const response = await fetch(`${shop.url}${path}`, {
    method,
    headers: { "content-type": "application/json", "idempotency-key": key },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

describe.each([true, false])("refund effect, crash after the provider refunded (provider dedups: %s)", (dedups) => {
  it("records the one refund the provider made, and never refunds twice", async () => {
    const { shop, payment, crashes } = await crashingShop(dedups);
    const order = { email: "ada@example.com", currency: "EUR", lines: [{ sku: "book", quantity: 2, unitPrice: 1250 }] };
    const placed = await call(shop, "POST", "/orders", order, `crash-${dedups}`);
    const id = placed.body.orderId as string;
    await expect.poll(async () => payment.ledger.charges.length, { timeout: 20_000 }).toBe(1);
    expect((await call(shop, "POST", `/orders/${id}/cancel`, { reason: "crash test" }, "c1")).status).toBe(202);
    await expect
      .poll(async () => ((await (await fetch(`${shop.url}/orders/${id}`)).json()) as OrderView).status, {
        timeout: 30_000,
      })
      .toBe("cancelled");
    expect(crashes()).toBe(1);
    expect(payment.ledger.refunds).toEqual([
      expect.objectContaining({ idempotencyKey: `order:${id}:refund`, amount: 2500, orderId: id }),
    ]);
    const view = (await (await fetch(`${shop.url}/orders/${id}`)).json()) as OrderView;
    expect(view.refunds).toEqual([
      expect.objectContaining({ status: "Completed", refundId: payment.ledger.refunds[0]?.refundId }),
    ]);
  });
});
