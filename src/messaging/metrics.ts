import { Counter, Gauge, Histogram, type Registry } from "prom-client";
import { perRegistry } from "../observability/per-registry.js";

/**
 * Metrics of the messaging layer, registered in the registry passed in (never prom-client's
 * global default, so two runtimes can live in one process). One set per registry: several
 * consumers and relays share it, told apart by the `consumer` label.
 */
export interface MessagingMetrics {
  registry: Registry;
  handled: Counter<"consumer" | "outcome">;
  /** Events handed over at commit by this process's relay and handled that way (outcome counted in `handled` too). */
  consumerHandedOver: Counter<"consumer">;
  backwards: Counter<"consumer" | "fact">;
  deadLetters: Counter<"consumer">;
  /** Deliveries left for a newer worker (reason `version-too-new`), each time. */
  deferred: Counter<"consumer" | "reason">;
  rejected: Counter<"consumer" | "reason">;
  conflicts: Counter<"consumer" | "kind">;
  gapAlerts: Counter<"consumer">;
  gapCheckFailures: Counter<"consumer">;
  parked: Gauge<"consumer">;
  published: Counter<"relay">;
  publishFailures: Counter<"relay">;
  /** Event rows that are no valid envelope (a bug or a hand-edited row), marked dead. */
  relayInvalid: Counter<"relay">;
  /** Event rows taken at their commit by this process's relay (see `EventHandOver`). */
  relayHandedOver: Counter<"relay">;
  /** Rows taken at commit that went to the claim path: their publish failed, or an earlier row of their stream's did. */
  relayHandOverReleased: Counter<"relay">;
  /** Commit to publish, per published event. */
  relayLag: Histogram<"relay">;
  /** The event's `occurredAt` to its handling, per applied event. */
  consumerLag: Histogram<"consumer">;
}

/** Lag buckets (seconds): from milliseconds in a healthy system to an hour behind. */
const LAG_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600];

export const messagingMetrics = perRegistry((registry): MessagingMetrics => {
  const registers = [registry];
  return {
    registry,
    handled: new Counter({
      name: "oncely_consumer_messages_total",
      help: "Integration events handled by consumers, by outcome (applied, duplicate, parked, ignored, dead, retry; released: a parked version applied once its predecessor came; copy: the durable copy of an event handed over at commit, settled from memory; hand-over-failed, hand-over-declined: a handed-over event left to its durable copy)",
      labelNames: ["consumer", "outcome"],
      registers,
    }),
    consumerHandedOver: new Counter({
      name: "oncely_consumer_handed_over_total",
      help: "Integration events handed over at commit by this process's relay and handled that way, with no transport in between (their outcome is counted in oncely_consumer_messages_total too)",
      labelNames: ["consumer"],
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
    deferred: new Counter({
      name: "oncely_consumer_deferred_total",
      help: "Deliveries a consumer left for a newer worker (reason version-too-new: written by a newer release), counted at every deferral",
      labelNames: ["consumer", "reason"],
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
    gapCheckFailures: new Counter({
      name: "oncely_gap_check_failures_total",
      help: "Gap checks of one source that failed (logged at warn; the next check tries again)",
      labelNames: ["consumer"],
      registers,
    }),
    parked: new Gauge({
      name: "oncely_parked_messages",
      help: "Messages parked per consumer after its last gap check (the journal's oncely_parked counts the same rows at scrape)",
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
    relayInvalid: new Counter({
      name: "oncely_relay_invalid_total",
      help: "Outbox event rows that are no valid envelope (a bug or a hand-edited row): marked dead, kept for an operator, logged at error",
      labelNames: ["relay"],
      registers,
    }),
    relayHandedOver: new Counter({
      name: "oncely_relay_handed_over_total",
      help: "Integration event rows a relay took at their commit, given to this process's consumers in memory and published with no claim",
      labelNames: ["relay"],
      registers,
    }),
    relayHandOverReleased: new Counter({
      name: "oncely_relay_hand_over_released_total",
      help: "Rows taken at commit that a relay left to the claim path: their publish failed, or an earlier row of their stream's had",
      labelNames: ["relay"],
      registers,
    }),
    relayLag: new Histogram({
      name: "oncely_relay_lag_seconds",
      help: "Time from an integration event's commit to its publication by the relay",
      labelNames: ["relay"],
      buckets: LAG_BUCKETS,
      registers,
    }),
    consumerLag: new Histogram({
      name: "oncely_consumer_lag_seconds",
      help: "Time from an integration event's occurredAt (producer clock) to its handling by a consumer, per applied event",
      labelNames: ["consumer"],
      buckets: LAG_BUCKETS,
      registers,
    }),
  };
});
