import { Registry } from "prom-client";

/**
 * One set of metrics per registry (prom-client refuses a second metric of one name in a
 * registry): `build` runs once per registry, later calls get the same set. No registry: a fresh
 * one, never prom-client's global default, so two runtimes can live in one process.
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
