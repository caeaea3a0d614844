import { ENDED_STATUSES } from "../ordering/status.js";
import type { OrderView } from "../service/order-view.js";

/** The shop's throughput end to end, from the client's first order to the last order that ended. */
export interface Throughput {
  /** Orders that ended (`ENDED_STATUSES`: completed, payment failed, cancelled, out of stock). */
  orders: number;
  /** From the first order's POST to the last order's terminal event. */
  seconds: number;
  ordersPerSecond: number;
  /** Per order: from its POST to the commit of its last order event (ms). */
  p50Ms: number;
  p99Ms: number;
}

const TERMINAL: ReadonlySet<string> = new Set(ENDED_STATUSES);

/** Nearest-rank percentile of `values` (p in 0..100). */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] as number;
}

/**
 * When an order ended: the time its own stream's last event was committed (the event that made it
 * terminal; a later one, say from a late duplicate, only makes the figure more conservative). The
 * shop records it with the worker's clock, the demo measures `placedAt` with its own: both are this
 * machine's wall clock.
 */
function endedAt(view: OrderView): number | undefined {
  if (!TERMINAL.has(view.status)) return undefined;
  const own = view.history.filter((entry) => entry.stream === `order/${view.orderId}`);
  if (own.length === 0) return undefined;
  return Math.max(...own.map((entry) => Date.parse(entry.recordedAt)));
}

/** Undefined when no order ended (nothing to measure). */
export function measureThroughput(
  placed: readonly { orderId: string; placedAt: number }[],
  views: Readonly<Record<string, OrderView | null>>,
): Throughput | undefined {
  const latencies: number[] = [];
  let first = Number.POSITIVE_INFINITY;
  let last = Number.NEGATIVE_INFINITY;
  for (const { orderId, placedAt } of placed) {
    first = Math.min(first, placedAt);
    const view = views[orderId];
    const ended = view ? endedAt(view) : undefined;
    if (ended === undefined) continue;
    last = Math.max(last, ended);
    latencies.push(Math.max(0, ended - placedAt));
  }
  if (latencies.length === 0) return undefined;
  const seconds = Math.max(last - first, 1) / 1000;
  return {
    orders: latencies.length,
    seconds,
    ordersPerSecond: latencies.length / seconds,
    p50Ms: percentile(latencies, 50),
    p99Ms: percentile(latencies, 99),
  };
}
