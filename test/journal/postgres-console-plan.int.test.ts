import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { OutboxPageQuery } from "../../src/journal/console-queries.js";
import { outboxPageStatement } from "../../src/postgres/console-queries.js";
import { tables } from "../../src/postgres/tables.js";
import { migratedPgSchema, PG_URL, probePostgres } from "../support/services.js";

/**
 * The console's pages stay short reads on a large outbox with the indexes of migration 0007: what
 * a page reads is only visible in its plan, so each page runs under EXPLAIN ANALYZE on an outbox of
 * 20,000 effect rows shaped as bench/console-pages.ts fills it (98% done, ten kinds, 2,000 owners),
 * and the rows its scans of the outbox touch (returned or filtered out) are counted.
 */
const service = await probePostgres();

const ROWS = 20_000;
const LIMIT = 50;

interface PlanNode {
  "Relation Name"?: string;
  "Node Type": string;
  "Index Name"?: string;
  "Actual Rows": number;
  "Actual Loops": number;
  "Rows Removed by Filter"?: number;
  Plans?: PlanNode[];
}

/** Rows the plan's scans of the outbox touched, and the indexes they read. */
function scanned(node: PlanNode, into = { rows: 0, indexes: new Set<string>(), seqScan: false }) {
  if (node["Relation Name"] === "outbox") {
    into.rows += (node["Actual Rows"] + (node["Rows Removed by Filter"] ?? 0)) * node["Actual Loops"];
    if (node["Node Type"] === "Seq Scan") into.seqScan = true;
  }
  // A bitmap scan names its index on the child that reads it (the heap scan above names the table).
  if (node["Index Name"]) into.indexes.add(node["Index Name"]);
  for (const child of node.Plans ?? []) scanned(child, into);
  return into;
}

describe.skipIf(!service.available)(
  `postgres console page plans${service.available ? "" : ` (skipped: ${service.reason})`}`,
  () => {
    let schema = "";
    let drop: () => Promise<void> = async () => {};
    const client = new pg.Client({ connectionString: PG_URL });
    beforeAll(async () => {
      ({ schema, drop } = await migratedPgSchema("pg_console_plan"));
      await client.connect();
      const t = tables(schema);
      await client.query(
        `INSERT INTO ${t.outbox} (id, category, kind, stream, payload, status, attempts, not_before, result,
           outcome, created_at, updated_at, slice)
         SELECT 'order:o-' || i || ':payment', 'effect', 'kind-' || (i % 10), 'order/o-' || (i % 2000), '{}',
           CASE WHEN i % 200 = 0 THEN 'resolving' WHEN i % 200 = 1 THEN 'reconcile'
                WHEN i % 100 IN (2, 3, 4) THEN 'pending' ELSE 'done' END, 1, i,
           CASE WHEN i % 200 IN (0, 1) THEN '{"unknownSince":1}'::jsonb ELSE '{}'::jsonb END,
           CASE WHEN i % 200 > 4 AND i % 100 > 4 THEN (CASE WHEN i % 50 = 7 THEN 'failed' ELSE 'completed' END) END,
           1000 * i, 1000 * i, i % 64
         FROM generate_series(1, ${ROWS}) AS i`,
      );
      await client.query(`VACUUM ANALYZE ${t.outbox}`);
    });
    afterAll(async () => {
      await client.end();
      await drop();
    });

    const explain = async (q: Omit<OutboxPageQuery, "category" | "limit">) => {
      const statement = outboxPageStatement(tables(schema), { ...q, category: "effect", limit: LIMIT });
      if (!statement) throw new Error("no statement");
      const result = await client.query(`EXPLAIN (ANALYZE, FORMAT JSON) ${statement.text}`, statement.values);
      return scanned((result.rows[0]["QUERY PLAN"] as { Plan: PlanNode }[])[0]?.Plan as PlanNode);
    };

    // Up to limit + 1 rows from each half of creation order; a page of open rows reads among the
    // 500 open rows only, one owner's among its ten.
    const bounded: [string, Omit<OutboxPageQuery, "category" | "limit">, number][] = [
      ["the newest page", {}, 2 * (LIMIT + 1)],
      [
        "the next page",
        { after: Buffer.from(JSON.stringify(["o", 10_000_000, 10_000])).toString("base64url") },
        2 * (LIMIT + 1),
      ],
      ["a day of creation time", { since: 5_000_000, until: 5_086_400 }, 2 * (LIMIT + 1)],
      ["Unknown", { effectStatus: "Unknown" }, 500],
      ["Pending", { effectStatus: "Pending" }, 500],
      ["the reconciliation queue", { status: ["reconcile"] }, 500],
      ["one owner", { stream: "order/o-42" }, 10],
      // Checked while walking: about one row in ten is of one kind, one in fifty of the done rows failed.
      ["one kind", { kind: "kind-3" }, 2 * 10 * (LIMIT + 1) + 20],
      ["Completed", { effectStatus: "Completed" }, 2 * (LIMIT + 1)],
      ["Failed", { effectStatus: "Failed" }, 50 * (LIMIT + 1) + 200],
    ];

    for (const [label, query, most] of bounded) {
      it(`reads at most ${most} of ${ROWS} rows for ${label}, through an index`, async () => {
        const plan = await explain(query);
        expect(plan.seqScan).toBe(false);
        expect(plan.rows).toBeLessThanOrEqual(most);
      });
    }

    it("walks each half of creation order in its own index, and one owner's rows in theirs", async () => {
      expect([...(await explain({})).indexes].sort()).toEqual(["outbox_page_finished", "outbox_page_open"]);
      expect([...(await explain({ effectStatus: "Failed" })).indexes]).toEqual(["outbox_page_finished"]);
      expect([...(await explain({ stream: "order/o-42" })).indexes]).toEqual(["outbox_page_stream"]);
    });
  },
);
