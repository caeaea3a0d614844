import { describe, expect, it } from "vitest";
import { loadShopEnv } from "../../examples/shop/config.js";
import { shopOptionsFromEnv, startShop } from "../../examples/shop/service/shop.js";
import { silentLogger } from "../../src/core/logger.js";
import { SliceLeaseManager } from "../../src/ownership/lease-manager.js";
import { SLICE_LEASES } from "../../src/ownership/lease-store.js";

describe("the shop's slice leases", () => {
  it("reads SLICE_LEASES (off unless set)", () => {
    expect(shopOptionsFromEnv(loadShopEnv({ SLICE_LEASES: "1" })).sliceLeases).toBe(true);
    expect(shopOptionsFromEnv(loadShopEnv({})).sliceLeases).toBe(false);
    expect(() => loadShopEnv({ SLICE_LEASES: "yes" })).toThrow(/SLICE_LEASES/);
  });

  it("runs its actors under leases when asked: its share taken before it listens, every slice let go at close", async () => {
    const shop = await startShop({
      port: 0,
      databaseUrl: "memory:",
      logger: silentLogger,
      sliceLeases: true,
      dispatcherOwner: "worker-1",
    });
    const journal = shop.journal;
    try {
      const ownership = shop.runtime.ownership;
      expect(ownership).toBeInstanceOf(SliceLeaseManager);
      expect((ownership as SliceLeaseManager).ownedSlices()).toHaveLength(ownership.sliceCount);
      expect((ownership as SliceLeaseManager).workerId).toBe("worker-1");
      const leases = await journal.listDocuments(SLICE_LEASES);
      expect(leases.every((lease) => (lease.doc as { owner: string }).owner === "worker-1")).toBe(true);
    } finally {
      await shop.close();
    }
  });
});
