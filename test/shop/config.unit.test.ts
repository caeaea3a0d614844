import { describe, expect, it } from "vitest";
import { loadShopEnv, ShopConfigError } from "../../examples/shop/config.js";
import { orderIdForKey, placeOrderFromBody } from "../../examples/shop/service/routes/orders.js";

describe("shop configuration from the environment", () => {
  it("uses loopback, port 3000, embedded SQLite and in-process providers when nothing is set", () => {
    const env = loadShopEnv({ PORT: "", UNRELATED: "x" });
    expect(env).toMatchObject({ PORT: 3000, HOST: "127.0.0.1", PAYMENT_PROVIDER_DEDUPS: true, LOG_LEVEL: "warn" });
    expect(env.DATABASE_URL).toBeUndefined();
    expect(env.PAYMENT_URL).toBeUndefined();
  });

  it("accepts a postgres URL with a schema and provider URLs", () => {
    const env = loadShopEnv({
      DATABASE_URL: "postgres://app@db:5432/shop?schema=oncely",
      PAYMENT_URL: "http://127.0.0.1:4001",
      PORT: "8080",
    });
    expect(env).toMatchObject({ DATABASE_URL: "postgres://app@db:5432/shop?schema=oncely", PORT: 8080 });
  });

  it("names every bad variable, without echoing passwords", () => {
    let error: unknown;
    try {
      loadShopEnv({
        PORT: "70000",
        DATABASE_URL: "mysql://root:secret@db/shop",
        EMAIL_URL: "not a url",
        LOG_LEVEL: "loud",
      });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ShopConfigError);
    const problems = (error as ShopConfigError).problems;
    expect(problems.map((p) => p.split(":")[0])).toEqual(["PORT", "DATABASE_URL", "EMAIL_URL", "LOG_LEVEL"]);
    expect((error as Error).message).not.toContain("secret");
  });
});

describe("peer forwarding between workers", () => {
  it("serves a peer port only with slice leases and a shared secret, never echoing the secret", () => {
    const secret = "a-peer-secret-of-24-chars";
    const env = loadShopEnv({ SLICE_LEASES: "1", PEER_PORT: "0", PEER_SECRET: secret });
    expect(env).toMatchObject({ PEER_PORT: 0, PEER_SECRET: secret });
    expect(() => loadShopEnv({ PEER_PORT: "0", PEER_SECRET: secret })).toThrow(/PEER_PORT: needs SLICE_LEASES=1/);
    expect(() => loadShopEnv({ SLICE_LEASES: "1", PEER_PORT: "0" })).toThrow(/PEER_SECRET/);
    let short: unknown;
    try {
      loadShopEnv({ SLICE_LEASES: "1", PEER_PORT: "0", PEER_SECRET: "tooShortSecret" });
    } catch (error) {
      short = error;
    }
    expect(short).toBeInstanceOf(ShopConfigError);
    expect(String(short)).toMatch(/PEER_SECRET: must be at least 16 characters/);
    expect(String(short)).not.toContain("tooShortSecret");
  });
});

describe("shipment check delay", () => {
  it("asks the warehouse a minute after the picklist's acceptance by default (half a shorter deadline), or when told", () => {
    expect(loadShopEnv({})).toMatchObject({ SHIPMENT_CHECK_MS: 60_000, SHIPMENT_DEADLINE_MS: 900_000 });
    expect(loadShopEnv({ SHIPMENT_DEADLINE_MS: "30000" }).SHIPMENT_CHECK_MS).toBe(15_000);
    expect(loadShopEnv({ SHIPMENT_CHECK_MS: "5000" }).SHIPMENT_CHECK_MS).toBe(5000);
  });

  it("refuses a check that would come only when the order already needs attention, naming both variables", () => {
    expect(() => loadShopEnv({ SHIPMENT_CHECK_MS: "30000", SHIPMENT_DEADLINE_MS: "30000" })).toThrow(
      /SHIPMENT_CHECK_MS: must be shorter than SHIPMENT_DEADLINE_MS \(30000\)/,
    );
    expect(() => loadShopEnv({ SHIPMENT_CHECK_MS: "soon" })).toThrow(/SHIPMENT_CHECK_MS: /);
  });
});

describe("order API body", () => {
  it("maps {email, currency, lines} to PlaceOrder and names the API's fields in issues", () => {
    expect(
      placeOrderFromBody({ email: "a@b.co", currency: "eur", lines: [{ sku: "x", quantity: 1, unitPrice: 5 }] }),
    ).toEqual({
      type: "PlaceOrder",
      customerEmail: "a@b.co",
      currency: "EUR",
      lines: [{ sku: "x", quantity: 1, unitPrice: 5 }],
    });
    expect(() => placeOrderFromBody({ currency: "EUR", lines: [] })).toThrow(
      /email: .*lines: must hold at least one line/,
    );
    expect(() =>
      placeOrderFromBody({
        email: "a@b.co",
        currency: "EUR",
        lines: [{ sku: "x", quantity: 1, unitPrice: 5 }],
        type: "X",
      }),
    ).toThrow(/type: unknown field/);
  });

  it("derives one order id per Idempotency-Key", () => {
    expect(orderIdForKey("k1")).toBe(orderIdForKey("k1"));
    expect(orderIdForKey("k1")).not.toBe(orderIdForKey("k2"));
    expect(orderIdForKey("k1")).toMatch(/^ord_[0-9a-f]{20}$/);
  });
});
