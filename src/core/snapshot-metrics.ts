import { Counter, type Registry } from "prom-client";
import { perRegistry } from "../observability/per-registry.js";

/** How often recovery met a snapshot at an older state version, and what it did with it. */
export interface SnapshotMetrics {
  registry: Registry;
  /** Older snapshots turned into the current shape by the actor's `snapshot.migrate`. */
  migrated: Counter<"actor_type">;
  /** Snapshots not used (another version with no migration, or failing validation): full replay. */
  ignored: Counter<"actor_type">;
}

export const snapshotMetrics = perRegistry(
  (registry): SnapshotMetrics => ({
    registry,
    migrated: new Counter({
      name: "oncely_snapshot_migrated_total",
      help: "Snapshots at an older state version migrated by the actor's snapshot.migrate",
      labelNames: ["actor_type"],
      registers: [registry],
    }),
    ignored: new Counter({
      name: "oncely_snapshot_ignored_total",
      help: "Snapshots recovery could not use (other version, no migration, or invalid): the stream was replayed",
      labelNames: ["actor_type"],
      registers: [registry],
    }),
  }),
);
