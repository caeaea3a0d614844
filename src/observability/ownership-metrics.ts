import { Counter, Gauge, type Registry } from "prom-client";
import { perRegistry } from "./per-registry.js";

/** Metrics of slice ownership: a lease manager's moves and holdings, a runtime's fenced commits. */
export interface OwnershipMetrics {
  registry: Registry;
  /** `acquired`, `released` (given up for a fair share or at stop), `lost` (lease lapsed or fenced out). */
  moves: Counter<"kind">;
  owned: Gauge;
  fencedCommits: Counter;
  /** Lease rounds that failed (the journal unreachable, say); the next round, or a retry at start, tries again. */
  failedRounds: Counter;
}

export const ownershipMetrics = perRegistry(
  (registry): OwnershipMetrics => ({
    registry,
    moves: new Counter({
      name: "oncely_slice_moves_total",
      help: "Slices this worker acquired, released, or lost (lease lapsed before renewal, or a commit fenced out)",
      labelNames: ["kind"],
      registers: [registry],
    }),
    owned: new Gauge({
      name: "oncely_slices_owned",
      help: "Slices this worker holds a lease on now",
      registers: [registry],
    }),
    fencedCommits: new Counter({
      name: "oncely_fenced_commits_total",
      help: "Commits refused because another worker took their slice (a higher fencing token); the slice was dropped",
      registers: [registry],
    }),
    failedRounds: new Counter({
      name: "oncely_slice_lease_rounds_failed_total",
      help: "Slice lease rounds that failed (the journal unreachable or the round refused); each is tried again",
      registers: [registry],
    }),
  }),
);
