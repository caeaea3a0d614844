import { Counter, type Registry } from "prom-client";
import { perRegistry } from "../messaging/metrics.js";

/**
 * Metrics of the dispatchers, registered in the registry passed in (never prom-client's global
 * default). One set per registry: several dispatchers share it, told apart by the `dispatcher` label.
 */
export interface EffectMetrics {
  registry: Registry;
  /** Effect rows a dispatcher claimed but had no handler for (handed back for another dispatcher). */
  unhandled: Counter<"dispatcher" | "kind">;
  /** Durable timers (`deadline`) fired at their owners. */
  timersFired: Counter<"actor_type" | "deadline">;
  /** Fired timers the owner acted on: the awaited fact had not come in time. */
  deadlinesMissed: Counter<"actor_type" | "deadline">;
}

export const effectMetrics = perRegistry(
  (registry): EffectMetrics => ({
    registry,
    unhandled: new Counter({
      name: "oncely_effect_unhandled_kind_total",
      help: "Effect rows claimed by a dispatcher with no handler for their kind (a missing registration waits forever)",
      labelNames: ["dispatcher", "kind"],
      registers: [registry],
    }),
    timersFired: new Counter({
      name: "oncely_timer_fired_total",
      help: "Durable timers (deadlines) fired at their owners",
      labelNames: ["actor_type", "deadline"],
      registers: [registry],
    }),
    deadlinesMissed: new Counter({
      name: "oncely_deadline_missed_total",
      help: "Fired deadlines the owner acted on because the awaited fact had not come",
      labelNames: ["actor_type", "deadline"],
      registers: [registry],
    }),
  }),
);
