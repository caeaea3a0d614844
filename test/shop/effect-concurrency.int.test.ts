import { describe, expect, it } from "vitest";
import { loadShopEnv, ShopConfigError } from "../../examples/shop/config.js";
import { SHOP_EFFECT_CONCURRENCY, shopOptionsFromEnv, startShop } from "../../examples/shop/service/shop.js";
import { silentLogger } from "../../src/core/logger.js";

describe("the shop's effect concurrency", () => {
  it("reads EFFECT_CONCURRENCY from the environment and names it when it is not a positive integer", () => {
    expect(shopOptionsFromEnv(loadShopEnv({ EFFECT_CONCURRENCY: "48" })).effectConcurrency).toBe(48);
    expect(shopOptionsFromEnv(loadShopEnv({})).effectConcurrency).toBeUndefined();
    for (const bad of ["0", "-3", "2.5", "many", "5000"]) {
      let error: unknown;
      try {
        loadShopEnv({ EFFECT_CONCURRENCY: bad });
      } catch (e) {
        error = e;
      }
      expect(error, bad).toBeInstanceOf(ShopConfigError);
      expect((error as ShopConfigError).problems.map((p) => p.split(":")[0])).toEqual(["EFFECT_CONCURRENCY"]);
    }
  });

  it("runs the dispatcher with it, and with SHOP_EFFECT_CONCURRENCY (not the library's 8) when unset", async () => {
    const chosen = await startShop({ port: 0, databaseUrl: "memory:", logger: silentLogger, effectConcurrency: 5 });
    try {
      expect(chosen.host.dispatcher.concurrency).toBe(5);
    } finally {
      await chosen.close();
    }
    const unset = await startShop({ port: 0, databaseUrl: "memory:", logger: silentLogger });
    try {
      expect(SHOP_EFFECT_CONCURRENCY).toBe(32);
      expect(unset.host.dispatcher.concurrency).toBe(SHOP_EFFECT_CONCURRENCY);
    } finally {
      await unset.close();
    }
  });
});
