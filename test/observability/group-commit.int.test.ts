import { Registry } from "prom-client";
import { afterAll, describe, expect, it } from "vitest";
import { observeJournal } from "../../src/observability/journal-metrics.js";
import { sqliteFactory } from "../effects/fixtures/journals.js";

describe("group-commit metrics on the SQLite journal", async () => {
  const factory = await sqliteFactory();
  afterAll(() => factory.teardown());

  it("observes every batch's size and write time, and stops when asked", async () => {
    const journal = await factory.create();
    const registry = new Registry();
    const stop = observeJournal({ journal, registry });
    // Commits made in one turn of the event loop go in one batch.
    await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        journal.commit({
          stream: `s/${i}`,
          expectedVersion: 0,
          events: [{ eventId: `e${i}`, type: "T", data: {} }],
          now: 1,
        }),
      ),
    );
    await journal.commit({
      stream: "s/9",
      expectedVersion: 0,
      events: [{ eventId: "e9", type: "T", data: {} }],
      now: 2,
    });
    const text = await registry.metrics();
    expect(text).toContain('oncely_group_commit_batch_size_count{backend="sqlite"} 2');
    expect(text).toContain('oncely_group_commit_batch_size_sum{backend="sqlite"} 7');
    expect(text).toContain('oncely_group_commit_duration_seconds_count{backend="sqlite"} 2');
    stop();
    await journal.commit({
      stream: "s/10",
      expectedVersion: 0,
      events: [{ eventId: "e10", type: "T", data: {} }],
      now: 3,
    });
    expect(await registry.metrics()).toContain('oncely_group_commit_batch_size_count{backend="sqlite"} 2');
  });
});
