import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { VersionConflictError } from "../../src/base/errors.js";
import type { JournalSummary } from "../../src/journal/types.js";
import { observeJournal, retryReason } from "../../src/observability/journal-metrics.js";

/** A journal that reports its store's `retry` answers, as the PostgreSQL journal does. */
function retryingJournal() {
  const listeners = new Set<(reason: unknown) => void>();
  return {
    backend: "postgres",
    summarize: async (): Promise<JournalSummary> => ({ outbox: [], deadLetters: [], parked: [] }) as never,
    onCommitRetry(listener: (reason: unknown) => void) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    retry: (reason: unknown) => {
      for (const listener of listeners) listener(reason);
    },
  };
}

describe("commits queued again after the store answered retry", () => {
  it("are counted by reason, and a deadlock is warned about", async () => {
    const journal = retryingJournal();
    const registry = new Registry();
    const warnings: unknown[] = [];
    const logger = { warn: (o: unknown) => warnings.push(o), info: () => {}, error: () => {}, debug: () => {} };
    const stop = observeJournal({ journal, registry, logger: logger as never });
    const deadlock = Object.assign(new Error("deadlock detected"), { code: "40P01" });
    journal.retry(deadlock);
    journal.retry(deadlock);
    journal.retry(new VersionConflictError("order/1", 0, undefined));
    const text = await registry.getSingleMetricAsString("oncely_journal_commit_retries_total");
    expect(text).toContain('oncely_journal_commit_retries_total{backend="postgres",reason="deadlock"} 2');
    expect(text).toContain('oncely_journal_commit_retries_total{backend="postgres",reason="append-race"} 1');
    // An append race is the ordinary price of two writers; a deadlock is a defect to look into.
    expect(warnings).toHaveLength(2);
    stop();
    journal.retry(deadlock);
    expect(await registry.getSingleMetricAsString("oncely_journal_commit_retries_total")).toContain(
      'reason="deadlock"} 2',
    );
  });

  it("names PostgreSQL's two retry SQLSTATEs", () => {
    expect(retryReason(Object.assign(new Error("x"), { code: "40001" }))).toBe("serialization");
    expect(retryReason(Object.assign(new Error("x"), { code: "40P01" }))).toBe("deadlock");
    expect(retryReason(new Error("other"))).toBe("other");
  });
});
