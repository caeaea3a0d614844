import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { OrderView } from "../../examples/shop/service/order-view.js";
import { type Shop, startShop } from "../../examples/shop/service/shop.js";
import { bearer, signedHeaders } from "../support/shop-http.js";
import { unreachableProvider } from "../support/unreachable-provider.js";

// The shop over real HTTP on loopback, with a SQLite journal in a temp dir and the fake providers
// in-process. Every bad request must get a clear 4xx in our {error, issues} shape, store nothing,
// and leave the service running.

let dir: string;
let shop: Shop;
const SECRET = "api-test-webhook-secret";
const order = { email: "ada@example.com", currency: "eur", lines: [{ sku: "book", quantity: 2, unitPrice: 1250 }] };

async function call(method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  const raw = typeof body === "string" ? body : body === undefined ? undefined : JSON.stringify(body);
  const response = await fetch(`${shop.url}${path}`, {
    method,
    headers: { ...(raw === undefined ? {} : { "content-type": "application/json" }), ...headers },
    ...(raw === undefined ? {} : { body: raw }),
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text === "" ? undefined : JSON.parse(text) };
}

/** For hooks, where expect.poll is not allowed. Fails the hook after `timeoutMs`. */
async function waitFor(condition: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const orderStreams = () => shop.journal.listStreams("order/");

async function expectRejected(answer: { status: number; body: unknown }, status: number, mention?: string) {
  expect(answer.status).toBe(status);
  const body = answer.body as { error: string; issues?: string[] };
  expect(typeof body.error).toBe("string");
  if (mention) expect(`${body.error} ${(body.issues ?? []).join(" ")}`).toContain(mention);
  expect((await call("GET", "/health")).status).toBe(200);
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "oncely-shop-api-"));
  shop = await startShop({
    port: 0,
    databaseUrl: `sqlite:${join(dir, "shop.db")}`,
    dataDir: dir,
    effectTimeoutMs: 1000,
    webhookSecret: SECRET,
  });
});
afterAll(async () => {
  await shop?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("POST /orders: bad input", () => {
  it("answers 400 for malformed JSON, non-objects, wrong types, negative amounts and unknown fields, storing nothing", async () => {
    await expectRejected(await call("POST", "/orders", '{"email": "ada@example.com",'), 400, "JSON");
    await expectRejected(await call("POST", "/orders", [order]), 400, "body");
    await expectRejected(
      await call("POST", "/orders", {
        email: 42,
        currency: "EUR",
        lines: [{ sku: "book", quantity: "2", unitPrice: 1 }],
      }),
      400,
      "lines.0.quantity",
    );
    const wrongEmail = await call("POST", "/orders", { ...order, email: 42 });
    expect(wrongEmail.body.issues.some((i: string) => i.startsWith("email:"))).toBe(true);
    await expectRejected(
      await call("POST", "/orders", { ...order, lines: [{ sku: "book", quantity: 1, unitPrice: -500 }] }),
      400,
      "lines.0.unitPrice",
    );
    await expectRejected(await call("POST", "/orders", { ...order, lines: [] }), 400, "lines");
    await expectRejected(await call("POST", "/orders", { ...order, currency: "euro" }), 400, "currency");
    await expectRejected(await call("POST", "/orders", { ...order, discount: 100 }), 400, "discount");
    await expectRejected(await call("POST", "/orders", order, { "idempotency-key": " " }), 400, "Idempotency-Key");
    expect(await orderStreams()).toEqual([]);
  });

  it("answers 413 for a body over the limit and 415 for a non-JSON body, storing nothing", async () => {
    const huge = {
      ...order,
      lines: Array.from({ length: 5000 }, (_, i) => ({ sku: `sku-${i}`, quantity: 1, unitPrice: 1 })),
    };
    await expectRejected(await call("POST", "/orders", huge), 413, "too large");
    const form = await fetch(`${shop.url}/orders`, {
      method: "POST",
      headers: { "content-type": "application/xml" },
      body: "<order/>",
    });
    expect(form.status).toBe(415);
    expect(await orderStreams()).toEqual([]);
  });
});

describe("orders", () => {
  it("with an Idempotency-Key: the same key and body return the same order; another body gets 409", async () => {
    const first = await call("POST", "/orders", order, { "idempotency-key": "api-test-1" });
    expect(first.status).toBe(201);
    expect(first.body.orderId).toMatch(/^ord_[0-9a-f]{20}$/);
    const again = await call("POST", "/orders", order, { "idempotency-key": "api-test-1" });
    expect(again.status).toBe(200);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.body.orderId).toBe(first.body.orderId);
    await expectRejected(
      await call(
        "POST",
        "/orders",
        { ...order, lines: [{ sku: "pen", quantity: 1, unitPrice: 300 }] },
        {
          "idempotency-key": "api-test-1",
        },
      ),
      409,
      "api-test-1",
    );
    const view = (await call("GET", `/orders/${first.body.orderId}`)).body as OrderView;
    expect(view.lines).toEqual(order.lines);
    expect(await orderStreams()).toEqual([`order/${first.body.orderId}`]);
  });

  it("runs an order to completed and shows facts, provider ids and history", async () => {
    const placed = await call("POST", "/orders", { ...order, email: "bob@example.com" });
    expect(placed.status).toBe(201);
    const id = placed.body.orderId as string;
    await expect
      .poll(async () => (await call("GET", `/orders/${id}`)).body.status, { timeout: 20_000 })
      .toBe("completed");
    const view = (await call("GET", `/orders/${id}`)).body as OrderView;
    expect(view).toMatchObject({
      orderId: id,
      payment: { status: "Completed", paymentId: expect.stringMatching(/^pay_/) },
      confirmationEmail: { status: "Completed" },
      picklist: { status: "Completed" },
      shipping: { status: "Completed", shipmentId: expect.stringMatching(/^ship_/) },
      shippingEmail: { status: "Completed" },
    });
    expect(view.history.map((h) => h.type)).toContain("OrderShipped");
    const listed = await call("GET", "/orders?status=completed");
    expect(listed.body.orders.map((o: { orderId: string }) => o.orderId)).toContain(id);
  });

  it("shows the order view built from integration events: facts, derived status, timeline per producer in version order", async () => {
    const id = (await call("POST", "/orders", { ...order, email: "dee@example.com" })).body.orderId as string;
    await expect
      .poll(async () => (await call("GET", `/order-views/${id}`)).body?.timeline?.length, { timeout: 20_000 })
      .toBe(4);
    const view = (await call("GET", `/order-views/${id}`)).body;
    expect(view).toMatchObject({
      orderId: id,
      status: "shipped",
      payment: "Processed",
      paymentId: expect.stringMatching(/^pay_/),
      shipping: "Shipped",
      shipmentId: expect.stringMatching(/^ship_/),
      placed: { currency: "EUR", amount: 2500 },
    });
    const timeline = view.timeline as { source: string; type: string; aggregateVersion: number }[];
    expect(timeline.slice(0, 2).map((t) => [t.source, t.type, t.aggregateVersion])).toEqual([
      ["ordering", "OrderPlaced", 1],
      ["payment", "PaymentProcessed", 1],
    ]);
    // Shipping's two events in the order Shipping recorded them (the webhook may beat the picklist's outcome).
    expect(timeline.slice(2).map((t) => [t.source, t.aggregateVersion])).toEqual([
      ["shipping", 1],
      ["shipping", 2],
    ]);
    expect(
      timeline
        .slice(2)
        .map((t) => t.type)
        .sort(),
    ).toEqual(["OrderShipped", "PicklistAccepted"]);
    await expectRejected(await call("GET", "/order-views/ord_nobody"), 404, "ord_nobody");
  });

  it("answers 404 for unknown order ids, 400 for malformed ids and bad filters", async () => {
    await expectRejected(await call("GET", "/orders/ord_doesnotexist"), 404, "ord_doesnotexist");
    await expectRejected(await call("GET", "/orders/bad%20id!"), 400, "id");
    await expectRejected(await call("GET", "/orders?status=lost"), 400, "status");
    expect(await orderStreams()).not.toContain("order/ord_doesnotexist");
  });
});

describe("POST /webhooks/warehouse", () => {
  let orderId: string;
  let recorded: OrderView["shipping"];
  beforeAll(async () => {
    orderId = (await call("POST", "/orders", { ...order, email: "cy@example.com" })).body.orderId;
    // The in-process warehouse ships and calls back on its own; wait for that first delivery.
    await waitFor(async () => (await call("GET", `/orders/${orderId}`)).body.status === "completed");
    recorded = ((await call("GET", `/orders/${orderId}`)).body as OrderView).shipping;
  });
  const webhook = () => ({
    eventId: recorded.eventId,
    type: "OrderShipped",
    orderId,
    shipmentId: recorded.shipmentId,
    occurredAt: recorded.occurredAt,
  });
  /** A webhook call signed with the warehouse's secret (the body sent is exactly the one signed). */
  const signed = (body: unknown) => {
    const raw = typeof body === "string" ? body : JSON.stringify(body);
    return call("POST", "/webhooks/warehouse", raw, signedHeaders(SECRET, raw));
  };
  const shippedEvents = async () =>
    ((await call("GET", `/orders/${orderId}`)).body as OrderView).history.filter((h) => h.type === "OrderShipped")
      .length;

  it("answers a redelivery of the same event as a duplicate and records nothing new", async () => {
    const again = await signed(webhook());
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ duplicate: true, shipmentId: recorded.shipmentId });
    expect(await shippedEvents()).toBe(1);
  });

  it("answers 409 for the same eventId with a different payload, and records nothing", async () => {
    await expectRejected(await signed({ ...webhook(), shipmentId: "ship_other" }), 409, "eventId");
    expect(((await call("GET", `/orders/${orderId}`)).body as OrderView).shipping.shipmentId).toBe(recorded.shipmentId);
    expect(await shippedEvents()).toBe(1);
  });

  it("answers 400 for invalid webhooks and 404 for unknown orders without creating a stream", async () => {
    await expectRejected(await signed({ ...webhook(), type: "OrderLost" }), 400, "type");
    await expectRejected(await signed({ ...webhook(), occurredAt: "yesterday" }), 400, "occurredAt");
    await expectRejected(await signed("{not json"), 400, "JSON");
    const before = await orderStreams();
    const shipmentsBefore = await shop.journal.listStreams("shipment/");
    await expectRejected(await signed({ ...webhook(), orderId: "ord_nobody", eventId: "evt-x" }), 404, "ord_nobody");
    expect(await orderStreams()).toEqual(before);
    expect(await shop.journal.listStreams("shipment/")).toEqual(shipmentsBefore);
  });
});

describe("admin", () => {
  it("validates settlements and answers 404 for unknown effect keys", async () => {
    await expectRejected(
      await call(
        "POST",
        "/admin/reconciliation/order:nope:payment/settle",
        { outcome: "maybe", by: "ops" },
        bearer(shop.adminToken),
      ),
      400,
    );
    await expectRejected(
      await call(
        "POST",
        "/admin/reconciliation/order:nope:payment/settle",
        { outcome: "failed", reason: "x", by: "ops" },
        bearer(shop.adminToken),
      ),
      404,
      "order:nope:payment",
    );
    await expectRejected(
      await call("GET", "/admin/effects?status=Weird", undefined, bearer(shop.adminToken)),
      400,
      "status",
    );
    const stats = await call("GET", "/admin/stats", undefined, bearer(shop.adminToken));
    expect(stats.body.runtime.commands).toBeGreaterThan(0);
  });
});

describe("reconciliation through the admin API", () => {
  let stuck: Shop;
  let nowhere: Awaited<ReturnType<typeof unreachableProvider>>;
  beforeAll(async () => {
    // A payment provider that cannot be reached and does not dedup: the charge is ambiguous, lookups
    // fail too, and the effect ends in the reconciliation queue for an operator.
    nowhere = await unreachableProvider();
    stuck = await startShop({
      port: 0,
      databaseUrl: "memory:",
      paymentUrl: nowhere.url,
      paymentDedups: false,
      effectTimeoutMs: 100,
    });
  });
  afterAll(async () => {
    await stuck?.close();
    await nowhere?.close();
  });

  it("shows the order as attention, refuses a settlement without paymentId, and records the operator's", async () => {
    const at = async (method: string, path: string, body?: unknown) => {
      const response = await fetch(`${stuck.url}${path}`, {
        method,
        headers: {
          ...bearer(stuck.adminToken),
          ...(body === undefined ? {} : { "content-type": "application/json" }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      // biome-ignore lint/suspicious/noExplicitAny: test answers are checked field by field
      return { status: response.status, body: (await response.json()) as any };
    };
    const { orderId } = (await at("POST", "/orders", order)).body;
    await expect
      .poll(async () => (await at("GET", `/orders/${orderId}`)).body.status, { timeout: 20_000 })
      .toBe("attention");
    const queue = (await at("GET", "/admin/reconciliation")).body;
    const key = `order:${orderId}:payment`;
    expect(queue.items.map((i: { key: string }) => i.key)).toEqual([key]);
    const missing = await at("POST", `/admin/reconciliation/${key}/settle`, {
      outcome: "succeeded",
      result: {},
      by: "ops",
    });
    expect(missing.status).toBe(400);
    expect(missing.body.issues.join(" ")).toContain("paymentId");
    const settled = await at("POST", `/admin/reconciliation/${key}/settle`, {
      outcome: "succeeded",
      result: { paymentId: "pay_found_by_hand" },
      by: "ops",
    });
    expect(settled.status).toBe(200);
    await expect
      .poll(async () => (await at("GET", `/orders/${orderId}`)).body.payment, { timeout: 20_000 })
      .toMatchObject({ status: "Completed", paymentId: "pay_found_by_hand", via: "operator" });
    const again = await at("POST", `/admin/reconciliation/${key}/settle`, {
      outcome: "failed",
      reason: "x",
      by: "ops",
    });
    expect(again.status).toBe(409);
  });
});
