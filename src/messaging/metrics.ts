import { Counter, Gauge, Registry } from "prom-client";

/**
 * Metrics of the messaging layer, registered in the registry passed in (never prom-client's
 * global default, so two runtimes can live in one process). One set per registry: several
 * consumers and relays share it, told apart by the `consumer` label.
 */
export interface MessagingMetrics {
  registry: Registry;
  handled: Counter<"consumer" | "outcome">;
  backwards: Counter<"consumer" | "fact">;
  deadLetters: Counter<"consumer">;
  rejected: Counter<"consumer" | "reason">;
  conflicts: Counter<"consumer" | "kind">;
  gapAlerts: Counter<"consumer">;
  parked: Gauge<"consumer">;
  published: Counter<"relay">;
  publishFailures: Counter<"relay">;
}

/**
 * One set of metrics per registry (prom-client refuses a second metric of one name in a
 * registry): `build` runs once per registry, later calls get the same set. No registry: a fresh one.
 */
export function perRegistry<M>(build: (registry: Registry) => M): (registry?: Registry) => M {
  const byRegistry = new WeakMap<Registry, M>();
  return (registry = new Registry()) => {
    const existing = byRegistry.get(registry);
    if (existing) return existing;
    const metrics = build(registry);
    byRegistry.set(registry, metrics);
    return metrics;
  };
}

export const messagingMetrics = perRegistry((registry): MessagingMetrics => {
  const registers = [registry];
  return {
    registry,
    handled: new Counter({
      name: "oncely_consumer_messages_total",
      help: "Integration events handled by consumers, by outcome (applied, duplicate, parked, dead, retry)",
      labelNames: ["consumer", "outcome"],
      registers,
    }),
    backwards: new Counter({
      name: "oncely_fact_backwards_total",
      help: "Fact transitions ignored because they would move a monotonic fact backwards",
      labelNames: ["consumer", "fact"],
      registers,
    }),
    deadLetters: new Counter({
      name: "oncely_dead_letters_total",
      help: "Messages stored as dead letters",
      labelNames: ["consumer"],
      registers,
    }),
    rejected: new Counter({
      name: "oncely_consumer_rejected_total",
      help: "Messages refused because their authenticity could not be verified (then dead-lettered), by reason",
      labelNames: ["consumer", "reason"],
      registers,
    }),
    conflicts: new Counter({
      name: "oncely_consumer_conflicts_total",
      help: "Messages contradicting one already handled (kind payload: same eventId, other content; version: other eventId at a held version)",
      labelNames: ["consumer", "kind"],
      registers,
    }),
    gapAlerts: new Counter({
      name: "oncely_gap_alerts_total",
      help: "Sequence gaps open longer than their timeout (one per gap)",
      labelNames: ["consumer"],
      registers,
    }),
    parked: new Gauge({
      name: "oncely_parked_messages",
      help: "Parked messages seen at the last gap check",
      labelNames: ["consumer"],
      registers,
    }),
    published: new Counter({
      name: "oncely_relay_published_total",
      help: "Integration events published by the relay",
      labelNames: ["relay"],
      registers,
    }),
    publishFailures: new Counter({
      name: "oncely_relay_publish_failures_total",
      help: "Publish attempts that failed and will be retried",
      labelNames: ["relay"],
      registers,
    }),
  };
});
