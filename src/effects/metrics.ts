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
  }),
);
