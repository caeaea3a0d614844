import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { loadShopEnv } from "../config.js";
import { devShopKeys, SIGNING_CONTEXTS, shopSigner, shopVerifier } from "./keys.js";

const secret = () => randomBytes(32).toString("base64");
const ring = (current: string, ...ids: string[]) => ({
  current,
  keys: Object.fromEntries(ids.map((id) => [id, secret()])),
});
const all = (make: (context: string) => object) =>
  JSON.stringify(Object.fromEntries(SIGNING_CONTEXTS.map((c) => [c, make(c)])));

describe("SHOP_SIGNING_KEYS", () => {
  it("gives each context its keyring; a key vouches for its own context only", () => {
    const env = loadShopEnv({ SHOP_SIGNING_KEYS: all((c) => ring(`${c}-2`, `${c}-2`, `${c}-1`)) });
    const keys = env.SHOP_SIGNING_KEYS;
    if (!keys) throw new Error("no keys parsed");
    expect(keys.payment.current).toBe("payment-2");
    expect(keys.payment.keys.map((k) => k.id)).toEqual(["payment-2", "payment-1"]);
    const event = {
      eventId: "payment:o1:processed",
      type: "PaymentProcessed",
      source: "payment",
      aggregateId: "o1",
      occurredAt: "2026-01-01T00:00:00.000Z",
      correlationId: "o1",
      causationId: "c",
      payload: { orderId: "o1" },
    };
    const signed = shopSigner(keys).sign(event);
    expect(signed.keyId).toBe("payment-2");
    expect(() => shopVerifier(keys).verify(signed, "shop.payment.PaymentProcessed")).not.toThrow();
    // The development keys are other keys: a message signed with them is refused here.
    expect(() => shopVerifier(keys).verify(shopSigner(devShopKeys()).sign(event))).toThrow(/unknown-key/);
  });

  it("names the problem and never echoes a secret", () => {
    const short = Buffer.alloc(8, 7).toString("base64");
    const bad = (value: string) => {
      try {
        loadShopEnv({ SHOP_SIGNING_KEYS: value });
      } catch (error) {
        return String(error);
      }
      return "accepted";
    };
    expect(bad("{not json")).toMatch(/SHOP_SIGNING_KEYS: must be a JSON object/);
    const missing = bad(JSON.stringify({ ordering: ring("o", "o") }));
    expect(missing).toMatch(/SHOP_SIGNING_KEYS: payment: /);
    const weak = all(() => ({ current: "k", keys: { k: short } }));
    expect(bad(weak)).toMatch(/SHOP_SIGNING_KEYS: ordering\.keys\.k: must be base64 of at least 32 bytes/);
    expect(bad(weak)).not.toContain(short);
    expect(bad(all((c) => ring("nope", `${c}-1`)))).toMatch(/current key "nope" is not among the keys/);
  });
});
