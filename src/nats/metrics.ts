import { Counter, type Registry } from "prom-client";
import { perRegistry } from "../observability/per-registry.js";

/** Metrics of the NATS transport's consume loops, one set per registry, told apart by consumer. */
export interface NatsMetrics {
  registry: Registry;
  /** A consume loop opened again on its durable: the pull iterator ended or failed, heartbeats were missed, a reconnect. */
  consumeRestarts: Counter<"consumer">;
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
  }),
);
