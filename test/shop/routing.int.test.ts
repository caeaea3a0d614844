import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { orderIdForKey } from "../../examples/shop/service/routes/orders.js";
import { type Shop, startShop } from "../../examples/shop/service/shop.js";
import { DEFAULT_SLICE_COUNT, type Ownership, sliceOfAddress } from "../../src/core/slices.js";
import { callShop } from "../support/shop-http.js";

/** Owns the slices of one parity (a fixed ownership, as a lease manager would answer it). */
const half = (parity: 0 | 1): Ownership => ({
  sliceCount: DEFAULT_SLICE_COUNT,
  owns: (slice) => slice % 2 === parity,
  fence: () => undefined,
  onChange: () => () => {},
});

/** Two shop workers on one SQLite file, each owning half of the slices. */
describe("the shop's HTTP commands on two workers", () => {
  const dir = mkdtempSync(join(tmpdir(), "oncely-shop-routing-"));
  const shops: Shop[] = [];
  beforeAll(async () => {
    for (const parity of [0, 1] as const) {
      shops.push(
        await startShop({
          port: 0,
          databaseUrl: `sqlite:${join(dir, "shop.db")}`,
          dataDir: join(dir, `w${parity}`),
          effectTimeoutMs: 1000,
          ownership: half(parity),
        }),
      );
    }
  });
  afterAll(async () => {
    for (const shop of shops) await shop.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("places an order sent to the worker that does not own it on the one that does", async () => {
    const [a, b] = shops as [Shop, Shop];
    let key = "";
    for (let i = 0; ; i++) {
      key = `routed-${i}`;
      if (sliceOfAddress(`order/${orderIdForKey(key)}`, DEFAULT_SLICE_COUNT) % 2 === 1) break;
    }
    const order = { email: "ada@example.com", currency: "EUR", lines: [{ sku: "book", quantity: 1, unitPrice: 1250 }] };
    const placed = await callShop(a.url, "POST", "/orders", order, { "idempotency-key": key });
    expect(placed.status).toBe(201);
    expect(placed.body.orderId).toBe(orderIdForKey(key));
    expect(a.runtime.stats.commands).toBe(0);
    expect(b.runtime.stats.commands).toBeGreaterThan(0);
    const again = await callShop(a.url, "POST", "/orders", order, { "idempotency-key": key });
    expect(again.status).toBe(200);
  });
});
