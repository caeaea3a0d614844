import { Counter, Histogram, type Registry } from "prom-client";
import { perRegistry } from "./per-registry.js";

/** Latency buckets (seconds) for journal commits: a commit is sub-millisecond to about a second. */
const COMMIT_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];

/** Metrics of the runtime (one set per registry, told apart by the `actor` type label). */
export interface RuntimeMetrics {
  registry: Registry;
  commands: Counter<"actor">;
  commitSeconds: Histogram<"actor">;
  conflicts: Counter<"actor">;
  duplicates: Counter<"actor">;
  recoveries: Counter<"actor">;
  passivations: Counter;
  groupCommitBatch: Histogram<"backend">;
  groupCommitSeconds: Histogram<"backend">;
  commitRetries: Counter<"backend" | "reason">;
}

export const runtimeMetrics = perRegistry((registry): RuntimeMetrics => {
  const registers = [registry];
  return {
    registry,
    commands: new Counter({
      name: "oncely_commands_total",
      help: "Commands handled by actors (duplicates included)",
      labelNames: ["actor"],
      registers,
    }),
    commitSeconds: new Histogram({
      name: "oncely_commit_duration_seconds",
      help: "Time a command's commit took in the journal, as its actor waited for it (group commit included)",
      labelNames: ["actor"],
      buckets: COMMIT_BUCKETS,
      registers,
    }),
    conflicts: new Counter({
      name: "oncely_version_conflicts_total",
      help: "Commits refused because another writer moved the actor's stream first (the command is decided again)",
      labelNames: ["actor"],
      registers,
    }),
    duplicates: new Counter({
      name: "oncely_inbox_duplicates_total",
      help: "Commands an actor had handled before (same message id): answered from its inbox, nothing changed",
      labelNames: ["actor"],
      registers,
    }),
    recoveries: new Counter({
      name: "oncely_actor_recoveries_total",
      help: "Actors rebuilt from the journal (snapshot and events) into memory",
      labelNames: ["actor"],
      registers,
    }),
    passivations: new Counter({
      name: "oncely_actor_passivations_total",
      help: "Idle actors dropped from memory (idle too long, or beyond maxActive)",
      registers,
    }),
    groupCommitBatch: new Histogram({
      name: "oncely_group_commit_batch_size",
      help: "Commits written together in one transaction by group commit",
      labelNames: ["backend"],
      buckets: [1, 2, 4, 8, 16, 32, 64, 128, 256, 512],
      registers,
    }),
    groupCommitSeconds: new Histogram({
      name: "oncely_group_commit_duration_seconds",
      help: "Time one group-commit batch took to write",
      labelNames: ["backend"],
      buckets: COMMIT_BUCKETS,
      registers,
    }),
    commitRetries: new Counter({
      name: "oncely_journal_commit_retries_total",
      help: "Commits the store answered retry (deadlock, serialization, append race) and group commit queued again",
      labelNames: ["backend", "reason"],
      registers,
    }),
  };
});

/** One actor type's series, label values bound once: prom-client hashes a labels object on every call. */
export interface ActorMetrics {
  commands: Counter.Internal;
  commitSeconds: Histogram.Internal<"actor">;
  conflicts: Counter.Internal;
  duplicates: Counter.Internal;
  recoveries: Counter.Internal;
}

const bound = new WeakMap<RuntimeMetrics, Map<string, ActorMetrics>>();

export function actorMetrics(metrics: RuntimeMetrics, actor: string): ActorMetrics {
  let byActor = bound.get(metrics);
  if (!byActor) {
    byActor = new Map();
    bound.set(metrics, byActor);
  }
  let series = byActor.get(actor);
  if (!series) {
    const labels = { actor };
    series = {
      commands: metrics.commands.labels(labels),
      commitSeconds: metrics.commitSeconds.labels(labels),
      conflicts: metrics.conflicts.labels(labels),
      duplicates: metrics.duplicates.labels(labels),
      recoveries: metrics.recoveries.labels(labels),
    };
    byActor.set(actor, series);
  }
  return series;
}
