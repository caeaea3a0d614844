import { Gauge, type Registry } from "prom-client";
import type { Clock } from "../core/clock.js";
import { resolveEnvironment } from "../core/environment.js";
import type { Journal } from "../journal/types.js";
import { type ConsumerLag, consumerLag, type PendingCount } from "../messaging/consumer-lag.js";

export interface ObserveConsumerLagOptions {
  journal: Journal;
  registry: Registry;
  /** Subscriptions by consumer name, whose broker counts what is pending (NATS, the journal transport...). */
  subscriptions?: Readonly<Record<string, PendingCount>> | undefined;
  clock?: Clock | undefined;
}

/**
 * Consumer lag as gauges read at each scrape (one `consumerLag` per scrape, shared):
 * `oncely_consumer_lag{consumer, source}` (source `published-log`: entries behind the journal's
 * log head; source `broker`: the subscription's pending count), `oncely_consumer_parked{consumer,
 * source}` and `oncely_consumer_parked_oldest_age_seconds{consumer, source}` per source with
 * parked messages (a label per such source: only sources behind a gap have one).
 */
export function observeConsumerLag(options: ObserveConsumerLagOptions): void {
  const { journal, registry } = options;
  const { clock } = resolveEnvironment({ clock: options.clock, registry });
  let pending: Promise<ConsumerLag> | undefined;
  const read = () => {
    pending ??= consumerLag(journal, options.subscriptions).finally(() => {
      pending = undefined;
    });
    return pending;
  };
  const gauge = (name: string, help: string, fill: (g: Gauge<"consumer" | "source">, lag: ConsumerLag) => void) =>
    new Gauge<"consumer" | "source">({
      name,
      help,
      labelNames: ["consumer", "source"],
      registers: [registry],
      async collect() {
        const lag = await read();
        this.reset();
        fill(this, lag);
      },
    });
  gauge(
    "oncely_consumer_lag",
    "Messages a consumer has not handled yet: entries behind the published log's head (source published-log) or the broker's pending count (source broker)",
    (g, lag) => {
      for (const r of lag.log) g.set({ consumer: r.consumer, source: "published-log" }, r.behind);
      for (const b of lag.broker) if (b.pending !== null) g.set({ consumer: b.consumer, source: "broker" }, b.pending);
    },
  );
  gauge("oncely_consumer_parked", "Messages a consumer holds parked behind a gap, per source", (g, lag) => {
    for (const p of lag.parked) g.set({ consumer: p.consumer, source: p.source }, p.count);
  });
  gauge(
    "oncely_consumer_parked_oldest_age_seconds",
    "How long the oldest message parked behind a gap has waited, per consumer and source",
    (g, lag) => {
      for (const p of lag.parked)
        g.set({ consumer: p.consumer, source: p.source }, Math.max(0, (clock.now() - p.oldestParkedAt) / 1000));
    },
  );
}
