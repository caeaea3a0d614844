import Fastify from "fastify";
import { describe, expect, it } from "vitest";
import { loadShopEnv, ShopConfigError } from "../../examples/shop/config.js";
import {
  DEFAULT_WEBHOOK_TOLERANCE_MS,
  signWebhook,
  verifyWebhookSignature,
} from "../../examples/shop/providers/shared/webhook-signature.js";
import {
  AdminTokenRequiredError,
  isLoopback,
  requireAdminToken,
  resolveAdminToken,
} from "../../examples/shop/service/admin-auth.js";
import { installErrorHandler } from "../../examples/shop/service/errors.js";
import { startShop } from "../../examples/shop/service/shop.js";
import { unstorableTextIssue } from "../../examples/shop/service/validation.js";
import { silentLogger } from "../../src/core/logger.js";
import { SimulatedClock } from "../../src/testing/clock.js";

const SECRET = "unit-test-webhook-secret";

describe("webhook signatures (clock injected)", () => {
  const body = Buffer.from('{"eventId":"e1","type":"OrderShipped"}');
  const check = (header: string | undefined, nowMs: number, toleranceMs = DEFAULT_WEBHOOK_TOLERANCE_MS) =>
    verifyWebhookSignature({ secret: SECRET, header, rawBody: body, nowMs, toleranceMs });

  it("accepts a call signed within the tolerance on either side, and refuses one outside it", () => {
    const clock = new SimulatedClock();
    const header = signWebhook(SECRET, body, clock.now());
    expect(check(header, clock.now())).toEqual({ ok: true });
    clock.advance(DEFAULT_WEBHOOK_TOLERANCE_MS);
    expect(check(header, clock.now())).toEqual({ ok: true });
    clock.advance(1000);
    expect(check(header, clock.now())).toMatchObject({ ok: false, reason: expect.stringContaining("stale") });
    // The window is configurable.
    expect(check(header, clock.now(), 10 * 60_000)).toEqual({ ok: true });
    const early = signWebhook(SECRET, body, clock.now() + DEFAULT_WEBHOOK_TOLERANCE_MS + 2000);
    expect(check(early, clock.now())).toMatchObject({ ok: false, reason: expect.stringContaining("stale") });
  });

  it("verifies the raw bytes: the same JSON with another spacing does not match", () => {
    const now = Date.UTC(2026, 0, 1);
    const header = signWebhook(SECRET, body, now);
    const respaced = Buffer.from('{"eventId": "e1", "type": "OrderShipped"}');
    expect(
      verifyWebhookSignature({ secret: SECRET, header, rawBody: respaced, nowMs: now, toleranceMs: 1000 }),
    ).toEqual({ ok: false, reason: "signature does not match the body" });
  });

  it("accepts any one matching v1 (rotation), and refuses missing, repeated or malformed headers", () => {
    const now = Date.UTC(2026, 0, 1);
    const [t, v1] = signWebhook(SECRET, body, now).split(",");
    const old = signWebhook("the-previous-secret-xyz", body, now).split(",")[1];
    expect(check(`${t},${old},${v1}`, now)).toEqual({ ok: true });
    expect(check(`${t},${old}`, now)).toMatchObject({ ok: false });
    expect(check(undefined, now)).toMatchObject({ ok: false, reason: expect.stringContaining("missing") });
    expect(check(`${v1}`, now)).toMatchObject({ ok: false, reason: expect.stringContaining("malformed") });
    expect(check(`${t},v1=zz`, now)).toMatchObject({ ok: false, reason: expect.stringContaining("malformed") });
    expect(
      verifyWebhookSignature({ secret: SECRET, header: ["a", "b"], rawBody: body, nowMs: now, toleranceMs: 1 }),
    ).toMatchObject({ ok: false, reason: expect.stringContaining("more than one") });
  });
});

describe("admin token", () => {
  it("knows loopback addresses", () => {
    for (const host of ["127.0.0.1", "127.1.2.3", "::1", "[::1]", "localhost"]) expect(isLoopback(host)).toBe(true);
    for (const host of ["0.0.0.0", "::", "10.0.0.1", "example.com", "128.0.0.1"]) expect(isLoopback(host)).toBe(false);
  });

  it("is generated from the injected randomness on loopback, and required beyond it", () => {
    const bytes = (size: number) => Buffer.alloc(size, 7);
    const generated = resolveAdminToken(undefined, "127.0.0.1", bytes);
    expect(generated).toEqual({ token: `adm_${Buffer.alloc(24, 7).toString("base64url")}`, generated: true });
    expect(() => resolveAdminToken(undefined, "0.0.0.0", bytes)).toThrow(AdminTokenRequiredError);
    expect(() => resolveAdminToken(undefined, "0.0.0.0", bytes)).toThrow(/ONCELY_ADMIN_TOKEN/);
    expect(resolveAdminToken("a-chosen-token-123456", "0.0.0.0", bytes)).toEqual({
      token: "a-chosen-token-123456",
      generated: false,
    });
    expect(() => resolveAdminToken("short", "127.0.0.1", bytes)).toThrow(/16-256/);
  });

  it("startShop refuses to listen beyond loopback without a token, before anything starts", async () => {
    await expect(startShop({ host: "0.0.0.0", port: 0, databaseUrl: "memory:" })).rejects.toBeInstanceOf(
      AdminTokenRequiredError,
    );
  });

  it("answers 401 without the bearer token, with a wrong one, or with it in a cookie", async () => {
    const app = Fastify();
    installErrorHandler(app, silentLogger);
    app.addHook("onRequest", requireAdminToken("the-right-token-0123"));
    app.get("/admin/x", async () => ({ ok: true }));
    const get = (headers: Record<string, string>) => app.inject({ method: "GET", url: "/admin/x", headers });
    expect((await get({})).statusCode).toBe(401);
    expect((await get({ authorization: "Bearer the-right-token-0124" })).statusCode).toBe(401);
    expect((await get({ authorization: "Basic the-right-token-0123" })).statusCode).toBe(401);
    expect((await get({ cookie: "token=the-right-token-0123" })).statusCode).toBe(401);
    expect((await get({ authorization: "Bearer the-right-token-0123" })).statusCode).toBe(200);
    await app.close();
  });
});

describe("configuration of the boundary", () => {
  it("reads the token, the webhook secret, the tolerance and the order bounds, never echoing secrets", () => {
    const env = loadShopEnv({
      ONCELY_ADMIN_TOKEN: "an-admin-token-of-length",
      WAREHOUSE_WEBHOOK_SECRET: "a-webhook-secret-0123",
      WEBHOOK_TOLERANCE_S: "60",
      MAX_ORDER_TOTAL: "5000",
      MAX_ORDER_LINES: "3",
    });
    expect(env).toMatchObject({ WEBHOOK_TOLERANCE_S: 60, MAX_ORDER_TOTAL: 5000, MAX_ORDER_LINES: 3 });
    expect(loadShopEnv({})).toMatchObject({ WEBHOOK_TOLERANCE_S: 300, MAX_ORDER_TOTAL: 100_000_000 });
    let error: unknown;
    try {
      loadShopEnv({ ONCELY_ADMIN_TOKEN: "shortsecret", WAREHOUSE_WEBHOOK_SECRET: "tinysecret" });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ShopConfigError);
    expect((error as ShopConfigError).problems.map((p) => p.split(":")[0])).toEqual([
      "ONCELY_ADMIN_TOKEN",
      "WAREHOUSE_WEBHOOK_SECRET",
    ]);
    expect((error as Error).message).not.toContain("shortsecret");
    expect((error as Error).message).not.toContain("tinysecret");
  });
});

describe("storable text", () => {
  it("names the first NUL or unpaired surrogate, in values and in field names, and passes paired ones", () => {
    expect(unstorableTextIssue({ a: ["ok", "emoji 😀"] }, "")).toBeUndefined();
    expect(unstorableTextIssue({ a: ["ok", "x\u0000"] }, "")).toBe(
      "a.1: must not contain NUL (U+0000) (at character 1)",
    );
    expect(unstorableTextIssue({ a: "\uD83D" }, "")).toContain("a: must not contain an unpaired UTF-16 surrogate");
    expect(unstorableTextIssue({ a: "\uDE00x" }, "")).toContain("unpaired");
    expect(unstorableTextIssue({ "k\u0000": 1 }, "body")).toContain("the field name must not contain NUL");
    expect(unstorableTextIssue(Buffer.from([0]), "")).toBeUndefined();
  });
});
