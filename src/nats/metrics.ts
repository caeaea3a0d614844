import { Counter, Gauge, type Registry } from "prom-client";
import { perRegistry } from "../observability/per-registry.js";

/** Metrics of the NATS transport's consume loops, one set per registry, told apart by consumer. */
export interface NatsMetrics {
  registry: Registry;
  /** A consume loop opened again on its durable: the pull iterator ended or failed, heartbeats were missed, a reconnect. */
  consumeRestarts: Counter<"consumer">;
  /** Messages found on a subject without a slice token in a partitioned stream: read by no partitioned durable. */
  unpartitioned: Gauge<"consumer">;
}

export const natsMetrics = perRegistry(
  (registry): NatsMetrics => ({
    registry,
    consumeRestarts: new Counter({
      name: "oncely_nats_consume_restarts_total",
      help: "Times a NATS consume loop was opened again on its durable (the pull iterator ended or failed, heartbeats missed, a reconnect); a failure is also a warning",
      labelNames: ["consumer"],
      registers: [registry],
    }),
    unpartitioned: new Gauge({
      name: "oncely_nats_unpartitioned_messages",
      help: "Messages of a partitioned stream on a subject without a slice token, which no partitioned durable reads (a publisher that does not partition, or messages from before the switch), as seen when the consumer subscribed",
      labelNames: ["consumer"],
      registers: [registry],
    }),
  }),
);
