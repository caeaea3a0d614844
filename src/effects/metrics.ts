import { Counter, Histogram, type Registry } from "prom-client";
import { perRegistry } from "../observability/per-registry.js";

/**
 * Metrics of the dispatchers, registered in the registry passed in (never prom-client's global
 * default). One set per registry: several dispatchers share it.
 */
export interface EffectMetrics {
  registry: Registry;
  /** Effect rows a dispatcher claimed but had no handler for (handed back for another dispatcher). */
  unhandled: Counter<"dispatcher" | "kind">;
  /** Durable timers (`deadline`) fired at their owners. */
  timersFired: Counter<"actor_type" | "deadline">;
  /** Fired timers the owner refused (a command it rejects): the row goes dead, and the error is logged. */
  timersDead: Counter<"actor_type" | "deadline">;
  /** Fired timers the owner acted on: the awaited fact had not come in time. */
  deadlinesMissed: Counter<"actor_type" | "deadline">;
  /** Handler runs started (each with the effect's one key). */
  attempts: Counter<"kind">;
  /** Lookups of an Unknown effect at its provider, by what they found. */
  lookups: Counter<"kind" | "answer">;
  /** Time a handler's `run` or `lookup` took (timeouts included), on the dispatcher's clock. */
  handlerSeconds: Histogram<"kind" | "call">;
  /** What became of a step: succeeded, failed, retried, not-performed, unknown, reconcile, dead. */
  outcomes: Counter<"kind" | "outcome">;
  /**
   * Effects sent to the reconciliation queue, by why: `max-attempts` / `max-age` (the budget of
   * not-performed retries), `lookups-exhausted`, `no-lookup`, `input-unreadable`, `settlement-refused`.
   */
  escalations: Counter<"kind" | "reason">;
  /** Rows taken by a dispatcher: by a claim query, or handed over at their commit. */
  taken: Counter<"category" | "how">;
  /** Actor-to-actor messages by outcome: delivered, rejected, dead. */
  messages: Counter<"actor" | "outcome">;
  /** Writes refused because the row's lease had passed to another dispatcher. */
  leaseLost: Counter;
}

export const effectMetrics = perRegistry((registry): EffectMetrics => {
  const registers = [registry];
  return {
    registry,
    unhandled: new Counter({
      name: "oncely_effect_unhandled_kind_total",
      help: "Effect rows claimed by a dispatcher with no handler for their kind (a missing registration waits forever)",
      labelNames: ["dispatcher", "kind"],
      registers,
    }),
    timersFired: new Counter({
      name: "oncely_timer_fired_total",
      help: "Durable timers (deadlines) fired at their owners",
      labelNames: ["actor_type", "deadline"],
      registers,
    }),
    timersDead: new Counter({
      name: "oncely_timer_dead_total",
      help: "Fired timers their owner refused: the row goes dead (kept, visible) instead of firing again",
      labelNames: ["actor_type", "deadline"],
      registers,
    }),
    deadlinesMissed: new Counter({
      name: "oncely_deadline_missed_total",
      help: "Fired deadlines the owner acted on because the awaited fact had not come",
      labelNames: ["actor_type", "deadline"],
      registers,
    }),
    attempts: new Counter({
      name: "oncely_effect_attempts_total",
      help: "Handler runs started, by effect kind",
      labelNames: ["kind"],
      registers,
    }),
    lookups: new Counter({
      name: "oncely_effect_lookups_total",
      help: "Lookups of Unknown effects at their provider, by kind and answer (succeeded, failed, not-found, unknown, error)",
      labelNames: ["kind", "answer"],
      registers,
    }),
    handlerSeconds: new Histogram({
      name: "oncely_effect_handler_duration_seconds",
      help: "Time a handler's run or lookup took, by kind and call (run, lookup)",
      labelNames: ["kind", "call"],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      registers,
    }),
    outcomes: new Counter({
      name: "oncely_effect_outcomes_total",
      help: "Effect steps by kind and outcome (succeeded, failed, retried, not-performed, unknown, reconcile, dead)",
      labelNames: ["kind", "outcome"],
      registers,
    }),
    escalations: new Counter({
      name: "oncely_effect_escalations_total",
      help: "Effects sent to the reconciliation queue, by kind and reason (max-attempts, max-age, lookups-exhausted, no-lookup, input-unreadable, settlement-refused)",
      labelNames: ["kind", "reason"],
      registers,
    }),
    taken: new Counter({
      name: "oncely_outbox_rows_taken_total",
      help: "Outbox rows taken by dispatchers, by category and how (claim, hand-over at commit)",
      labelNames: ["category", "how"],
      registers,
    }),
    messages: new Counter({
      name: "oncely_messages_total",
      help: "Actor-to-actor messages by target actor type and outcome (delivered, rejected, dead)",
      labelNames: ["actor", "outcome"],
      registers,
    }),
    leaseLost: new Counter({
      name: "oncely_outbox_lease_lost_total",
      help: "Writes to an outbox row refused because its lease had passed to another dispatcher",
      registers,
    }),
  };
});
