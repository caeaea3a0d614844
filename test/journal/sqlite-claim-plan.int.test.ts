import { describe, expect, it } from "vitest";
import type { ClaimOptions } from "../../src/journal/types.js";
import { claimParameters, claimSql } from "../../src/sqlite/outbox.js";
import { useMigratedSqliteFile } from "../support/migrated-sqlite-file.js";

/**
 * The outbox's claim and stream-order indexes hold only unfinished rows, and the stream-order one
 * no effect rows (migration 13). SQLite uses a partial index only when the statement says the
 * index's condition in the same words: the plans show which index each claim reads.
 */
describe("sqlite claim plans", () => {
  const file = useMigratedSqliteFile("oncely-claim-plan-");

  const planOf = (o: Partial<ClaimOptions>): string => {
    const options: ClaimOptions = { owner: "relay", now: 1, leaseMs: 1_000, limit: 10, inStreamOrder: true, ...o };
    const rows = file()
      .prepare(`EXPLAIN QUERY PLAN ${claimSql(options)}`)
      .all(claimParameters(options)) as {
      detail: string;
    }[];
    return rows.map((row) => row.detail).join("\n");
  };

  it("keeps finished rows out of both indexes and effect rows out of the stream-order index", () => {
    const sql = (name: string) =>
      (file().prepare("SELECT sql FROM sqlite_master WHERE type = 'index' AND name = ?").get(name) as { sql: string })
        .sql;
    expect(sql("outbox_claim")).toContain("WHERE status NOT IN ('done', 'dead')");
    expect(sql("outbox_stream_order")).toContain("category <> 'effect'");
  });

  it("reads both indexes for a claim in stream order that can take no effect (the relay's)", () => {
    const plan = planOf({ categories: ["event"] });
    expect(plan).toContain("outbox_claim");
    expect(plan).toContain("outbox_stream_order");
  });

  it("answers a claim that may take effects without the stream-order index", () => {
    expect(planOf({ categories: ["effect"] })).not.toContain("outbox_stream_order");
    expect(planOf({})).not.toContain("outbox_stream_order");
  });
});
