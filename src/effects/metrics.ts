import { Counter, Registry } from "prom-client";

/**
 * Metrics of the dispatchers, registered in the registry passed in (never prom-client's global
 * default). One set per registry: several dispatchers share it, told apart by the `dispatcher` label.
 */
export interface EffectMetrics {
  registry: Registry;
  /** Effect rows a dispatcher claimed but had no handler for (handed back for another dispatcher). */
  unhandled: Counter<"dispatcher" | "kind">;
}

const byRegistry = new WeakMap<Registry, EffectMetrics>();

export function effectMetrics(registry: Registry = new Registry()): EffectMetrics {
  const existing = byRegistry.get(registry);
  if (existing) return existing;
  const metrics: EffectMetrics = {
    registry,
    unhandled: new Counter({
      name: "oncely_effect_unhandled_kind_total",
      help: "Effect rows claimed by a dispatcher with no handler for their kind (a missing registration waits forever)",
      labelNames: ["dispatcher", "kind"],
      registers: [registry],
    }),
  };
  byRegistry.set(registry, metrics);
  return metrics;
}
