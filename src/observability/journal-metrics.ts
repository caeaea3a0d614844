import { Gauge, type Registry } from "prom-client";
import { VersionConflictError } from "../base/errors.js";
import type { Clock } from "../core/clock.js";
import { resolveEnvironment } from "../core/environment.js";
import type { Logger } from "../core/logger.js";
import type { JournalAdmin, JournalSummary } from "../journal/types.js";
import { runtimeMetrics } from "./runtime-metrics.js";

/** What the journal gauges read: the journal's name and its summary. */
export type ObservedJournal = Pick<JournalAdmin, "backend" | "summarize">;

export interface ObserveJournalOptions {
  journal: ObservedJournal;
  registry: Registry;
  /** For the ages (default the system clock). */
  clock?: Clock;
  /** Where a deadlock between batches is warned about (default: warnings on stderr). */
  logger?: Logger;
}

/** A journal that reports its group-commit batches (the SQLite and PostgreSQL journals do). */
interface GroupCommitting {
  onGroupCommit(listener: (size: number, seconds: number) => void): () => void;
}

const groupCommitting = (journal: ObservedJournal): journal is ObservedJournal & GroupCommitting =>
  typeof (journal as Partial<GroupCommitting>).onGroupCommit === "function";

/** A journal whose store may answer a commit `retry` (PostgreSQL). */
interface RetryReporting {
  onCommitRetry(listener: (reason: unknown) => void): () => void;
}

const retryReporting = (journal: ObservedJournal): journal is ObservedJournal & RetryReporting =>
  typeof (journal as Partial<RetryReporting>).onCommitRetry === "function";

/** Why the store answered `retry`, as a metric label: PostgreSQL's SQLSTATE for the two it retries. */
export function retryReason(reason: unknown): "deadlock" | "serialization" | "append-race" | "other" {
  const code = (reason as { code?: unknown } | null)?.code;
  if (code === "40P01") return "deadlock";
  if (code === "40001") return "serialization";
  if (reason instanceof VersionConflictError) return "append-race";
  return "other";
}

/**
 * Gauges read from the journal at each scrape (prom-client `collect`): one `journal.summarize()`
 * per scrape, shared by every gauge below, so nothing is counted on the hot path. Also feeds the
 * group-commit histograms when the journal batches its commits. Call once per journal and
 * registry; returns a function that stops the group-commit feed.
 */
export function observeJournal(options: ObserveJournalOptions): () => void {
  const { journal, registry } = options;
  const { clock, logger } = resolveEnvironment({ clock: options.clock, registry, logger: options.logger });
  let pending: Promise<JournalSummary> | undefined;
  // Every gauge's collect starts in the same turn of one scrape: they share one read.
  const summary = () => {
    pending ??= journal.summarize().finally(() => {
      pending = undefined;
    });
    return pending;
  };
  const ageSeconds = (at: number) => Math.max(0, (clock.now() - at) / 1000);
  const gauge = <L extends string>(
    name: string,
    help: string,
    labelNames: L[],
    fill: (gauge: Gauge<L>, s: JournalSummary) => void,
  ) =>
    new Gauge<L>({
      name,
      help,
      labelNames,
      registers: [registry],
      async collect() {
        const s = await summary();
        this.reset();
        fill(this, s);
      },
    });

  gauge(
    "oncely_effects",
    "Effects not done, by kind and status (pending, resolving, reconcile, dead)",
    ["kind", "status"],
    (g, s) => {
      for (const row of s.outbox)
        if (row.category === "effect") g.set({ kind: row.kind, status: row.status }, row.count);
    },
  );
  gauge(
    "oncely_effect_oldest_age_seconds",
    "Age of the oldest effect still Pending (pending) or Unknown (resolving or reconcile), by kind, since it was requested",
    ["kind", "state"],
    (g, s) => {
      const oldest = new Map<string, { kind: string; state: string; at: number }>();
      for (const row of s.outbox) {
        if (row.category !== "effect" || row.status === "dead") continue;
        const state = row.status === "pending" ? "pending" : "unknown";
        const k = `${row.kind}\u0000${state}`;
        const held = oldest.get(k);
        if (!held || row.oldestCreatedAt < held.at) oldest.set(k, { kind: row.kind, state, at: row.oldestCreatedAt });
      }
      for (const { kind, state, at } of oldest.values()) g.set({ kind, state }, ageSeconds(at));
    },
  );
  gauge("oncely_reconciliation_queue", "Effects waiting for an operator (status reconcile)", [], (g, s) => {
    g.set(s.outbox.filter((r) => r.category === "effect" && r.status === "reconcile").reduce((n, r) => n + r.count, 0));
  });
  gauge("oncely_relay_backlog", "Integration events committed and not yet published, by type", ["type"], (g, s) => {
    for (const row of s.outbox)
      if (row.category === "event" && row.status === "pending") g.set({ type: row.kind }, row.count);
  });
  gauge(
    "oncely_relay_oldest_age_seconds",
    "Age of the oldest integration event not yet published (relay lag)",
    [],
    (g, s) => {
      const waiting = s.outbox.filter((r) => r.category === "event" && r.status === "pending");
      g.set(waiting.length === 0 ? 0 : ageSeconds(Math.min(...waiting.map((r) => r.oldestCreatedAt))));
    },
  );
  gauge(
    "oncely_messages_undelivered",
    "Actor-to-actor messages not delivered yet, by target actor type and status",
    ["actor", "status"],
    (g, s) => {
      for (const row of s.outbox)
        if (row.category === "message") g.set({ actor: row.kind, status: row.status }, row.count);
    },
  );
  gauge(
    "oncely_parked",
    "Messages parked behind a sequence gap, per consumer (from the journal)",
    ["consumer"],
    (g, s) => {
      for (const p of s.parked) g.set({ consumer: p.consumer }, p.count);
    },
  );
  gauge(
    "oncely_gap_oldest_age_seconds",
    "Age of the oldest parked message per consumer: how long its gap has been open at least",
    ["consumer"],
    (g, s) => {
      for (const p of s.parked) g.set({ consumer: p.consumer }, ageSeconds(p.oldestParkedAt));
    },
  );
  gauge(
    "oncely_dead_letters_open",
    "Dead letters not replayed or discarded yet, per consumer",
    ["consumer"],
    (g, s) => {
      for (const d of s.deadLetters) g.set({ consumer: d.consumer }, d.count);
    },
  );

  const metrics = runtimeMetrics(registry);
  // A deadlock between two batches costs the server's deadlock timeout (a second by default) each
  // time, and its commits are queued again without an error reaching anyone: warned and counted.
  const stopRetries = retryReporting(journal)
    ? journal.onCommitRetry((reason) => {
        const why = retryReason(reason);
        metrics.commitRetries.inc({ backend: journal.backend, reason: why });
        if (why === "deadlock" || why === "other") {
          logger.warn(
            { err: reason, backend: journal.backend },
            "a commit was queued again after the store answered retry",
          );
        }
      })
    : () => {};
  if (!groupCommitting(journal)) return stopRetries;
  const stopBatches = journal.onGroupCommit((size, seconds) => {
    metrics.groupCommitBatch.observe({ backend: journal.backend }, size);
    metrics.groupCommitSeconds.observe({ backend: journal.backend }, seconds);
  });
  return () => {
    stopRetries();
    stopBatches();
  };
}
