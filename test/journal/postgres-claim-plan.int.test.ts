import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ClaimOptions } from "../../src/journal/types.js";
import { claimStatement } from "../../src/postgres/outbox.js";
import { tables } from "../../src/postgres/tables.js";
import { migratedPgSchema, PG_URL, probePostgres } from "../support/services.js";

/**
 * The stream-order index holds no effect rows (migration 13); a claim in stream order that can
 * take no effect says so in its probe, so the planner can prove the index applies. What the
 * planner chooses is only visible in its plan: sequential scans off, the index is used when, and
 * only when, its predicate is implied.
 */
const service = await probePostgres();

describe.skipIf(!service.available)(
  `postgres claim plans${service.available ? "" : ` (skipped: ${service.reason})`}`,
  () => {
    let schema = "";
    let drop: () => Promise<void> = async () => {};
    const client = new pg.Client({ connectionString: PG_URL });
    beforeAll(async () => {
      ({ schema, drop } = await migratedPgSchema("pg_claim_plan"));
      await client.connect();
      await client.query("SET enable_seqscan = off");
    });
    afterAll(async () => {
      await client.end();
      await drop();
    });

    const planOf = async (o: Partial<ClaimOptions>): Promise<string> => {
      const { text, values } = claimStatement(tables(schema), {
        owner: "relay",
        now: 1,
        leaseMs: 1_000,
        limit: 10,
        inStreamOrder: true,
        ...o,
      });
      const result = await client.query(`EXPLAIN (FORMAT JSON) ${text}`, values);
      return JSON.stringify(result.rows[0]);
    };

    it("keeps effect rows out of the stream-order index", async () => {
      const result = await client.query("SELECT indexdef FROM pg_indexes WHERE schemaname = $1 AND indexname = $2", [
        schema,
        "outbox_stream_order",
      ]);
      expect(result.rows[0]?.indexdef).toContain("<> 'effect'");
    });

    it("probes stream order through the index for a claim that can take no effect (the relay's)", async () => {
      expect(await planOf({ categories: ["event"] })).toContain("outbox_stream_order");
      expect(await planOf({ categories: ["event", "message"] })).toContain("outbox_stream_order");
    });

    it("filters a claim of some slices (a dispatcher's with an ownership) by slice, and a claim of all by nothing", async () => {
      // An outbox as a worker among several sees it: open rows in every slice (here 64), most due later (timers, backoffs), statistics taken.
      const t = tables(schema);
      await client.query(
        `INSERT INTO ${t.outbox} (id, category, kind, stream, payload, status, attempts, not_before, result,
           created_at, updated_at, slice)
         SELECT 'plan-' || i, 'effect', 'k', 'order/' || i, '{}', 'pending', 0, 100 + i, 'null', 0, 0, i % 64
         FROM generate_series(1, 20000) AS i`,
      );
      await client.query(`ANALYZE ${t.outbox}`);
      try {
        const plan = await planOf({ slices: [1, 3], inStreamOrder: false, categories: ["effect", "message"] });
        // Which index serves depends on the statistics (few due rows: the claim index, then the
        // filter); the slice index is there for a backlog in the owned slices. The filter is always applied.
        expect(plan).toContain("slice = ANY");
        expect(await planOf({ inStreamOrder: false, categories: ["effect", "message"] })).not.toContain("slice");
      } finally {
        await client.query(`DELETE FROM ${t.outbox} WHERE id LIKE 'plan-%'`);
        await client.query(`ANALYZE ${t.outbox}`);
      }
    });

    it("answers a claim that may take effects without that index", async () => {
      expect(await planOf({ categories: ["effect"] })).not.toContain("outbox_stream_order");
      expect(await planOf({})).not.toContain("outbox_stream_order");
    });
  },
);
