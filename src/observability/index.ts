// Metrics (prom-client, in a registry you pass) and traces (OpenTelemetry API), see docs/operations/metrics-and-traces.md.

export { type ObserveConsumerLagOptions, observeConsumerLag } from "./consumer-lag-metrics.js";
export { type ObservedJournal, type ObserveJournalOptions, observeJournal } from "./journal-metrics.js";
export { type OwnershipMetrics, ownershipMetrics } from "./ownership-metrics.js";
export { perRegistry } from "./per-registry.js";
export { type RuntimeMetrics, runtimeMetrics } from "./runtime-metrics.js";
export { ATTR as SPAN_ATTRIBUTES, type TraceCarrier } from "./tracing.js";
