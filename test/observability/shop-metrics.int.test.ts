import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Shop, startShop } from "../../examples/shop/service/shop.js";

// The shop's GET /metrics over real HTTP: one order through every context, then a scrape.

let dir: string;
let shop: Shop;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "oncely-shop-metrics-"));
  shop = await startShop({
    port: 0,
    databaseUrl: `sqlite:${join(dir, "shop.db")}`,
    dataDir: dir,
    effectTimeoutMs: 1000,
    webhookSecret: "metrics-test-webhook-secret",
  });
});
afterAll(async () => {
  await shop?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("GET /metrics on the shop", () => {
  it("serves the library's metrics in Prometheus text format, without the admin token", async () => {
    const placed = await fetch(`${shop.url}/orders`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        email: "ada@example.com",
        currency: "eur",
        lines: [{ sku: "book", quantity: 1, unitPrice: 900 }],
      }),
    });
    expect(placed.status).toBe(201);
    const { orderId } = (await placed.json()) as { orderId: string };
    await expect
      .poll(async () => ((await (await fetch(`${shop.url}/orders/${orderId}`)).json()) as { status: string }).status, {
        timeout: 20_000,
      })
      .toBe("completed");

    const response = await fetch(`${shop.url}/metrics`);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toContain("text/plain");
    const text = await response.text();
    const value = (series: string) => {
      const line = text.split("\n").find((l) => l.startsWith(`${series} `));
      return line === undefined ? undefined : Number(line.slice(series.length + 1));
    };
    expect(value('oncely_effect_attempts_total{kind="payment"}')).toBeGreaterThanOrEqual(1);
    expect(value('oncely_effect_outcomes_total{kind="payment",outcome="succeeded"}')).toBe(1);
    expect(value('oncely_commands_total{actor="order"}')).toBeGreaterThan(1);
    expect(value('oncely_group_commit_batch_size_count{backend="sqlite"}')).toBeGreaterThan(0);
    expect(text).toMatch(/^oncely_relay_lag_seconds_count\{relay="[^"]+"\} [1-9]/m);
    expect(text).toMatch(/^oncely_consumer_lag_seconds_count\{consumer="[^"]+"\} [1-9]/m);
    // Scrape-time gauges are present (no effect waits once the order completed).
    expect(value("oncely_reconciliation_queue")).toBe(0);
    expect(text).toContain("# TYPE oncely_effects gauge");
    expect(text).toContain("# TYPE process_cpu_seconds_total counter");
  });
});
