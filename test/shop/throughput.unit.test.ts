import { describe, expect, it } from "vitest";
import { measureThroughput, percentile } from "../../examples/shop/demo/throughput.js";
import type { OrderView } from "../../examples/shop/service/order-view.js";

const T0 = Date.UTC(2026, 10, 30, 12);

/** An order view with the history the measure reads: its own stream's events, and another stream's. */
function view(orderId: string, status: OrderView["status"], ownEventsAt: number[], otherAt?: number): OrderView {
  const entry = (stream: string, at: number, version: number) => ({
    stream,
    version,
    type: "Happened",
    recordedAt: new Date(at).toISOString(),
    data: {},
  });
  return {
    orderId,
    status,
    history: [
      ...ownEventsAt.map((at, i) => entry(`order/${orderId}`, at, i + 1)),
      ...(otherAt === undefined ? [] : [entry(`payment/${orderId}`, otherAt, 1)]),
    ],
  } as OrderView;
}

describe("demo throughput", () => {
  it("counts terminal orders from the first POST to the last order's last own event", () => {
    const placed = [
      { orderId: "a", placedAt: T0 },
      { orderId: "b", placedAt: T0 + 100 },
      { orderId: "c", placedAt: T0 + 200 },
      { orderId: "d", placedAt: T0 + 300 },
    ];
    const views = {
      // Another stream's later event does not count: the order ended with its own last event.
      a: view("a", "completed", [T0 + 10, T0 + 400], T0 + 5_000),
      b: view("b", "payment_failed", [T0 + 150, T0 + 2_100]),
      c: view("c", "paid", [T0 + 250]), // not terminal: left out
      d: null,
    };
    const t = measureThroughput(placed, views);
    expect(t).toEqual({ orders: 2, seconds: 2.1, ordersPerSecond: 2 / 2.1, p50Ms: 400, p99Ms: 2_000 });
  });

  it("counts a cancelled or out-of-stock order as ended, as the demo's progress and audit do", () => {
    const placed = [
      { orderId: "a", placedAt: T0 },
      { orderId: "b", placedAt: T0 + 100 },
      { orderId: "c", placedAt: T0 + 200 },
    ];
    const views = {
      a: view("a", "cancelled", [T0 + 10, T0 + 1_000]),
      b: view("b", "out_of_stock", [T0 + 150, T0 + 600]),
      c: view("c", "refunding", [T0 + 250]), // still refunding: not ended
    };
    expect(measureThroughput(placed, views)).toEqual({
      orders: 2,
      seconds: 1,
      ordersPerSecond: 2,
      p50Ms: 500,
      p99Ms: 1_000,
    });
  });

  it("has nothing to measure when no order ended", () => {
    expect(measureThroughput([{ orderId: "a", placedAt: T0 }], { a: view("a", "placed", [T0]) })).toBeUndefined();
  });

  it("takes nearest-rank percentiles", () => {
    const values = Array.from({ length: 100 }, (_, i) => 100 - i);
    expect([percentile(values, 50), percentile(values, 99), percentile(values, 100)]).toEqual([50, 99, 100]);
    expect(percentile([7], 99)).toBe(7);
    expect(percentile([], 50)).toBeNaN();
  });
});
