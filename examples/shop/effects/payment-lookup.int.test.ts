import { createServer, type Server } from "node:http";
import { errors } from "oncely";
import { afterEach, describe, expect, it } from "vitest";
import { startShop } from "../service/shop.js";
import { createPaymentHandler } from "./payment-handler.js";

/**
 * A payment provider that speaks only the contract's minimal lookup body: `GET
 * /payments?idempotencyKey=K` answers `200 {paymentId, status}` (plus whatever `extra` says). Its
 * `POST /payments` charges, then answers 500: every charge is ambiguous and only a lookup can
 * settle it.
 */
async function startMinimalProvider(extra: Record<string, unknown> = {}) {
  const charged = new Map<string, string>();
  const server: Server = createServer((request, response) => {
    const url = new URL(request.url ?? "/", "http://x");
    request.resume();
    request.on("end", () => {
      if (request.method === "POST" && url.pathname === "/payments") {
        const key = String(request.headers["idempotency-key"]);
        if (!charged.has(key)) charged.set(key, `pay_min_${charged.size + 1}`);
        response.writeHead(500, { "content-type": "application/json" }).end('{"error":"lost the answer"}');
        return;
      }
      const key = url.searchParams.get("idempotencyKey") ?? "";
      const paymentId = charged.get(key) ?? (extra.paymentId as string | undefined);
      if (request.method === "GET" && url.pathname === "/payments" && paymentId !== undefined) {
        response
          .writeHead(200, { "content-type": "application/json" })
          .end(JSON.stringify({ paymentId, status: "succeeded", ...extra }));
        return;
      }
      response.writeHead(404).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("no address");
  const stop = () => new Promise<void>((resolve) => server.close(() => resolve()));
  cleanup.push(stop);
  return { url: `http://127.0.0.1:${address.port}`, charged };
}

const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(cleanup.splice(0).map((close) => close()));
});

const input = { orderId: "ord_1", amount: 2500, currency: "EUR" };
const lookup = (url: string, key: string) =>
  createPaymentHandler({ baseUrl: url }).lookup?.(key, { signal: AbortSignal.timeout(5000), input });

describe("payment lookup: the contract's minimal body", () => {
  it("takes 200 {paymentId, status} as a valid record", async () => {
    const provider = await startMinimalProvider({ paymentId: "pay_minimal" });
    expect(await lookup(provider.url, "order:ord_1:payment")).toEqual({
      outcome: "succeeded",
      result: { paymentId: "pay_minimal" },
    });
  });

  it("checks orderId, amount and currency only when the provider returns them", async () => {
    const same = await startMinimalProvider({ paymentId: "pay_same", amount: 2500, currency: "EUR" });
    expect(await lookup(same.url, "k1")).toMatchObject({ outcome: "succeeded" });
    const other = await startMinimalProvider({ paymentId: "pay_other", amount: 9900 });
    await expect(lookup(other.url, "k2")).rejects.toBeInstanceOf(errors.IdempotencyKeyReusedError);
    const otherOrder = await startMinimalProvider({ paymentId: "pay_x", orderId: "ord_2" });
    await expect(lookup(otherOrder.url, "k3")).rejects.toBeInstanceOf(errors.IdempotencyKeyReusedError);
  });

  it("completes an ambiguous charge of a shop order through that lookup instead of sending it to attention", async () => {
    const provider = await startMinimalProvider();
    const shop = await startShop({
      port: 0,
      databaseUrl: "memory:",
      paymentUrl: provider.url,
      paymentDedups: false,
      effectTimeoutMs: 200,
    });
    cleanup.push(() => shop.close());
    const response = await fetch(`${shop.url}/orders`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        email: "min@example.com",
        currency: "EUR",
        lines: [{ sku: "b", quantity: 1, unitPrice: 700 }],
      }),
    });
    const { orderId } = (await response.json()) as { orderId: string };
    const status = async () =>
      ((await (await fetch(`${shop.url}/orders/${orderId}`)).json()) as { status: string }).status;
    await expect.poll(status, { timeout: 30_000 }).toBe("completed");
    expect(provider.charged.size).toBe(1);
  });
});
