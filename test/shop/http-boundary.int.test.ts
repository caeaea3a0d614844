import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startWarehouseProvider, type WarehouseProvider } from "../../examples/shop/providers/warehouse/server.js";
import { type Shop, startShop } from "../../examples/shop/service/shop.js";
import { SimulatedClock } from "../../src/testing/clock.js";
import { freshPgSchema, PG_URL, probePostgres } from "../support/services.js";
import { type Answer, bearer, callShop, signedHeaders } from "../support/shop-http.js";
import { unreachableProvider } from "../support/unreachable-provider.js";

// The shop's HTTP boundary against an attacker and a clumsy client, on SQLite and on PostgreSQL:
// the admin API needs the token, webhooks must be signed by the warehouse and fresh, and every
// input is bounded (a value PostgreSQL cannot store is a 400 there as on SQLite, never a 500).

const SECRET = "http-boundary-webhook-secret";
const TOKEN = "http-boundary-admin-token-0123";
const order = { email: "ada@example.com", currency: "EUR", lines: [{ sku: "book", quantity: 2, unitPrice: 1250 }] };

interface Backend {
  name: string;
  skip: string;
  /** A fresh database for one shop, and how to drop it. */
  database(dir: string, label: string): Promise<{ url: string; drop: () => Promise<void> }>;
}

const postgres = await probePostgres();
const backends: Backend[] = [
  {
    name: "sqlite",
    skip: "",
    database: async (dir, label) => ({ url: `sqlite:${join(dir, `${label}.db`)}`, drop: async () => {} }),
  },
  {
    name: "postgres",
    skip: postgres.available ? "" : `(skipped: ${postgres.reason})`,
    async database(_dir, label) {
      const { schema, drop } = await freshPgSchema(`http_${label}`);
      return { url: `${PG_URL}?schema=${schema}`, drop };
    },
  },
];

for (const backend of backends) {
  describe.skipIf(backend.skip !== "")(`the shop's HTTP boundary on ${backend.name} ${backend.skip}`, () => {
    let dir: string;
    let shop: Shop;
    /** A shop whose payment provider cannot be reached: its orders end in the reconciliation queue. */
    let stuck: Shop;
    /** The warehouse ships only when this clock is advanced, so a forged call surely comes first. */
    let warehouseClock: SimulatedClock;
    let warehouse: WarehouseProvider;
    const drops: (() => Promise<void>)[] = [];

    const call = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
      callShop(shop.url, method, path, body, headers);
    const admin = (method: string, path: string, body?: unknown) =>
      callShop(stuck.url, method, path, body, bearer(TOKEN));
    const orderStreams = () => shop.journal.listStreams("order/");
    const expectRejected = async (answer: Answer, status: number, ...mentions: string[]) => {
      expect(answer.status, JSON.stringify(answer.body)).toBe(status);
      expect(typeof answer.body.error).toBe("string");
      const text = `${answer.body.error} ${(answer.body.issues ?? []).join(" ")}`;
      for (const mention of mentions) expect(text).toContain(mention);
    };

    beforeAll(async () => {
      dir = mkdtempSync(join(tmpdir(), `oncely-http-${backend.name}-`));
      const main = await backend.database(dir, "main");
      const other = await backend.database(dir, "stuck");
      drops.push(main.drop, other.drop);
      warehouseClock = new SimulatedClock(Date.now());
      warehouse = await startWarehouseProvider({
        webhookSecret: SECRET,
        clock: warehouseClock,
        shipDelayMs: 0,
        webhook: { backoffMs: 50, maxBackoffMs: 100, maxAttempts: 1000 },
      });
      shop = await startShop({
        port: 0,
        databaseUrl: main.url,
        dataDir: join(dir, "main"),
        warehouseUrl: warehouse.url,
        webhookSecret: SECRET,
        adminToken: TOKEN,
        effectTimeoutMs: 1000,
      });
      warehouse.setShopUrl(shop.url);
      // A provider that resets every connection: a merely free port could be taken by another test.
      const nowhere = await unreachableProvider();
      drops.push(nowhere.close);
      stuck = await startShop({
        port: 0,
        databaseUrl: other.url,
        dataDir: join(dir, "stuck"),
        paymentUrl: nowhere.url,
        paymentDedups: false,
        adminToken: TOKEN,
        effectTimeoutMs: 100,
      });
    });
    afterAll(async () => {
      await shop?.close();
      await stuck?.close();
      await warehouse?.close();
      for (const drop of drops) await drop();
      rmSync(dir, { recursive: true, force: true });
    });

    describe("admin API", () => {
      let orderId: string;
      let key: string;
      beforeAll(async () => {
        orderId = (await callShop(stuck.url, "POST", "/orders", order)).body.orderId;
        key = `order:${orderId}:payment`;
        const deadline = Date.now() + 30_000;
        while ((await callShop(stuck.url, "GET", `/orders/${orderId}`)).body.status !== "attention") {
          if (Date.now() > deadline) throw new Error("the stuck order never reached attention");
          await new Promise((r) => setTimeout(r, 100));
        }
      });

      it("answers 401 to every admin route without a valid token, GET included", async () => {
        for (const path of ["/admin/reconciliation", "/admin/effects", "/admin/stats"]) {
          const anonymous = await callShop(stuck.url, "GET", path);
          await expectRejected(anonymous, 401, "Bearer");
          expect(anonymous.headers.get("www-authenticate")).toMatch(/^Bearer/);
          expect(anonymous.body).not.toHaveProperty("items");
          await expectRejected(await callShop(stuck.url, "GET", path, undefined, bearer(`${TOKEN}x`)), 401, "invalid");
          await expectRejected(await callShop(stuck.url, "GET", path, undefined, { authorization: TOKEN }), 401);
          expect((await admin("GET", path)).status).toBe(200);
        }
        // Paths that are no admin route answer 401 too: an anonymous caller cannot map the admin API.
        await expectRejected(await callShop(stuck.url, "GET", "/admin/users"), 401);
        await expectRejected(await callShop(stuck.url, "DELETE", "/admin/reconciliation"), 401);
        expect((await admin("GET", "/admin/users")).status).toBe(404);
        // No cookie auth: the token in a cookie opens nothing.
        await expectRejected(
          await callShop(stuck.url, "GET", "/admin/stats", undefined, { cookie: `token=${TOKEN}` }),
          401,
        );
      });

      it("refuses an anonymous settlement with 401 and settles nothing; the operator's then lands", async () => {
        const forged = { outcome: "succeeded", result: { paymentId: "pay_ATTACKER" }, by: "attacker" };
        const path = `/admin/reconciliation/${encodeURIComponent(key)}/settle`;
        const before = await stuck.journal.getOutbox(key);
        await expectRejected(await callShop(stuck.url, "POST", path, forged), 401);
        await expectRejected(await callShop(stuck.url, "POST", path, forged, bearer("a-guessed-token-0000")), 401);
        expect(await stuck.journal.getOutbox(key)).toEqual(before);
        expect((await admin("GET", "/admin/reconciliation")).body.items.map((i: { key: string }) => i.key)).toEqual([
          key,
        ]);
        expect((await callShop(stuck.url, "GET", `/orders/${orderId}`)).body.status).toBe("attention");

        const settled = await admin("POST", path, { ...forged, result: { paymentId: "pay_by_operator" }, by: "ops" });
        expect(settled.status).toBe(200);
        await expect
          .poll(async () => (await callShop(stuck.url, "GET", `/orders/${orderId}`)).body.payment, { timeout: 20_000 })
          .toMatchObject({ status: "Completed", paymentId: "pay_by_operator" });
      });

      it("answers 400 naming the field for unstorable text in an admin path, query or settlement", async () => {
        await expectRejected(await admin("GET", "/admin/effects?kind=pay%00ment"), 400, "kind", "U+0000");
        await expectRejected(
          await admin("POST", "/admin/reconciliation/order%00x/settle", { outcome: "failed", reason: "x", by: "o" }),
          400,
          "key",
          "U+0000",
        );
        await expectRejected(
          await admin("POST", `/admin/reconciliation/${encodeURIComponent(key)}/settle`, {
            outcome: "failed",
            reason: "bad\u0000reason",
            by: "ops",
          }),
          400,
          "reason",
        );
      });
    });

    describe("warehouse webhook", () => {
      it("refuses unsigned, forged, tampered and stale calls with 401, records none, and the real call still lands", async () => {
        const { orderId } = (await call("POST", "/orders", { ...order, email: "ship@example.com" })).body;
        // The warehouse has the picklist, and ships only when its clock moves: the forgeries come first.
        await expect
          .poll(() => warehouse.ledger.picklists.some((p) => p.orderId === orderId), { timeout: 20_000 })
          .toBe(true);
        const forged = JSON.stringify({
          eventId: `warehouse:forged:${orderId}`,
          type: "OrderShipped",
          orderId,
          shipmentId: "ship_FORGED",
          occurredAt: new Date().toISOString(),
        });
        const post = (headers: Record<string, string>) => call("POST", "/webhooks/warehouse", forged, headers);
        await expectRejected(await post({}), 401, "missing Oncely-Signature");
        await expectRejected(await post({ "oncely-signature": "t=1,v1=abc" }), 401, "malformed");
        await expectRejected(await post(signedHeaders("a-secret-the-attacker-chose", forged)), 401, "does not match");
        const tampered = signedHeaders(SECRET, forged.replace("ship_FORGED", "ship_000001"));
        await expectRejected(await post(tampered), 401, "does not match");
        // A call captured ten minutes ago and replayed now, and one dated ten minutes ahead.
        await expectRejected(await post(signedHeaders(SECRET, forged, Date.now() - 10 * 60_000)), 401, "stale");
        await expectRejected(await post(signedHeaders(SECRET, forged, Date.now() + 10 * 60_000)), 401, "stale");

        const recorded = async () =>
          (await shop.journal.readStream(`shipment/${orderId}`)).filter((e) => e.type === "ShipmentRecorded");
        expect(await recorded()).toEqual([]);
        expect((await call("GET", `/orders/${orderId}`)).body.shipping.status).not.toBe("Completed");

        await expect
          .poll(
            async () => {
              warehouseClock.advance(100);
              return (await call("GET", `/orders/${orderId}`)).body.shipping.status;
            },
            { timeout: 30_000 },
          )
          .toBe("Completed");
        const shipment = warehouse.ledger.shipments.find((s) => s.orderId === orderId);
        expect((await call("GET", `/orders/${orderId}`)).body.shipping.shipmentId).toBe(shipment?.shipmentId);
        expect((await recorded()).map((e) => (e.data as { shipmentId: string }).shipmentId)).toEqual([
          shipment?.shipmentId,
        ]);
      });

      it("answers a signed call with unstorable text or bad JSON with 400 naming the field", async () => {
        const body = JSON.stringify({
          eventId: "evt\u0000x",
          type: "OrderShipped",
          orderId: "ord_nobody",
          shipmentId: "ship_x",
          occurredAt: new Date().toISOString(),
        });
        await expectRejected(
          await call("POST", "/webhooks/warehouse", body, signedHeaders(SECRET, body)),
          400,
          "eventId",
          "U+0000",
        );
        await expectRejected(
          await call("POST", "/webhooks/warehouse", "{not json", signedHeaders(SECRET, "{not json")),
          400,
          "JSON",
        );
        const poisoned = '{"__proto__":{"admin":true},"eventId":"e","type":"OrderShipped"}';
        await expectRejected(
          await call("POST", "/webhooks/warehouse", poisoned, signedHeaders(SECRET, poisoned)),
          400,
          "JSON",
        );
      });
    });

    describe("POST /orders: bounded inputs", () => {
      const line = order.lines[0] as (typeof order.lines)[number];
      const cases: [string, unknown, string][] = [
        ["a currency outside ISO 4217", { ...order, currency: "XYZ" }, "currency"],
        [
          "a total of 2^53-1 minor units",
          { ...order, lines: [{ ...line, quantity: 1, unitPrice: Number.MAX_SAFE_INTEGER }] },
          "unitPrice",
        ],
        [
          "a total of 1e15 minor units",
          { ...order, lines: [{ ...line, quantity: 1000, unitPrice: 1e12 }] },
          "unitPrice",
        ],
        [
          "a total over the maximum from lines under it",
          { ...order, lines: [{ ...line, quantity: 10_000, unitPrice: 100_000 }] },
          "amount",
        ],
        ["a 1,000-character email", { ...order, email: `${"a".repeat(988)}@example.com` }, "email"],
        ["a 60 KB sku", { ...order, lines: [{ ...line, sku: "s".repeat(60_000) }] }, "lines.0.sku"],
        ["101 lines", { ...order, lines: Array.from({ length: 101 }, (_, i) => ({ ...line, sku: `s${i}` })) }, "lines"],
        ["a sku with NUL", { ...order, lines: [{ ...line, sku: "bo\u0000ok" }] }, "lines.0.sku: must not contain NUL"],
        [
          "a sku with an unpaired surrogate",
          { ...order, lines: [{ ...line, sku: "bo\uD800ok" }] },
          "lines.0.sku: must not contain an unpaired UTF-16 surrogate",
        ],
        ["an email with NUL", { ...order, email: "ada\u0000@example.com" }, "email: must not contain NUL"],
        [
          "an email with an unpaired surrogate",
          { ...order, email: "ada\uDC00@example.com" },
          "email: must not contain an unpaired UTF-16 surrogate",
        ],
      ];
      for (const [what, body, mention] of cases) {
        it(`answers 400 for ${what}, naming the field, and stores nothing`, async () => {
          const before = await orderStreams();
          await expectRejected(await call("POST", "/orders", body), 400, mention);
          expect(await orderStreams()).toEqual(before);
        });
      }

      it("answers 415 for text/plain and other non-JSON content types", async () => {
        const before = await orderStreams();
        for (const type of ["text/plain", "text/plain; charset=utf-8", "application/x-www-form-urlencoded"]) {
          const answer = await callShop(shop.url, "POST", "/orders", JSON.stringify(order), { "content-type": type });
          await expectRejected(answer, 415, "application/json");
        }
        expect(await orderStreams()).toEqual(before);
      });

      it("still accepts an order at the bounds", async () => {
        const atBounds = {
          email: `${"a".repeat(242)}@example.com`,
          currency: "jpy",
          lines: Array.from({ length: 100 }, (_, i) => ({ sku: `${"s".repeat(60)}${i}`, quantity: 1, unitPrice: 1 })),
        };
        const answer = await call("POST", "/orders", atBounds);
        expect(answer.status, JSON.stringify(answer.body)).toBe(201);
      });
    });
  });
}
