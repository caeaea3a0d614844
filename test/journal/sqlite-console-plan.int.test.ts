import { describe, expect, it } from "vitest";
import type { OutboxPageQuery } from "../../src/journal/console-queries.js";
import { outboxPageStatement } from "../../src/sqlite/console-queries.js";
import { useMigratedSqliteFile } from "../support/migrated-sqlite-file.js";

/**
 * The console's outbox pages stay short reads with the indexes SQLite's migrations leave (7 dropped
 * outbox_page_kind). A page is bounded when its plan walks one index in page order: SQLite then
 * stops at limit + 1 rows. A scan of the table reads every row, and a sort (a temporary B-tree)
 * gathers every matching row before the first is returned; neither may appear. The journal runs no
 * ANALYZE, so the plans do not depend on the rows: they are read on a freshly migrated file.
 */
describe("sqlite console page plans", () => {
  const file = useMigratedSqliteFile("oncely-console-plan-");

  const planOf = (q: Omit<OutboxPageQuery, "category" | "limit">): string => {
    const statement = outboxPageStatement({ ...q, category: "effect", limit: 50 });
    if (!statement) throw new Error("no statement");
    const rows = file().prepare(`EXPLAIN QUERY PLAN ${statement.text}`).all(statement.params) as { detail: string }[];
    return rows.map((row) => row.detail).join("\n");
  };

  const after = Buffer.from(JSON.stringify(["o", 10_000_000, 10_000])).toString("base64url");
  const pages: [string, Omit<OutboxPageQuery, "category" | "limit">, string][] = [
    ["the newest page", {}, "outbox_page"],
    ["the next page", { after }, "outbox_page"],
    ["a day of creation time", { since: 5_000_000, until: 5_086_400 }, "outbox_page"],
    ["Unknown", { effectStatus: "Unknown" }, "outbox_page_open"],
    ["Pending", { effectStatus: "Pending" }, "outbox_page_open"],
    ["the reconciliation queue", { status: ["reconcile"] }, "outbox_page_open"],
    ["one owner", { stream: "order/o-42" }, "outbox_page_stream"],
    ["Completed", { effectStatus: "Completed" }, "outbox_page"],
    ["Failed", { effectStatus: "Failed" }, "outbox_page"],
    ["a text", { text: "o-42" }, "outbox_page"],
    // A kind is checked while walking the creation-order index the page would walk without it.
    ["one kind", { kind: "kind-3" }, "outbox_page"],
    ["one kind, the next page", { kind: "kind-3", after }, "outbox_page"],
    ["one kind, Pending", { kind: "kind-3", effectStatus: "Pending" }, "outbox_page_open"],
    ["one kind of one owner", { kind: "kind-3", stream: "order/o-42" }, "outbox_page_stream"],
  ];

  for (const [label, query, index] of pages) {
    it(`walks ${index} in page order for ${label}, with no scan of the outbox and no sort`, () => {
      const plan = planOf(query);
      expect(plan).toMatch(new RegExp(`^SEARCH outbox USING INDEX ${index} \\(`));
      expect(plan.split("\n")).toHaveLength(1);
      expect(plan).not.toMatch(/SCAN outbox|TEMP B-TREE/);
    });
  }

  it("has no outbox_page_kind any more", () => {
    const names = file().prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'outbox'").all();
    expect(names).not.toContainEqual({ name: "outbox_page_kind" });
    expect(names).toContainEqual({ name: "outbox_page" });
  });
});
