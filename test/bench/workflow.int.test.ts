import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { runOncelyMemory, runOncelySqlite } from "../../bench/workflow.js";
import { countSql, cpuPerOrder } from "../../bench/workflow-figures.js";
import { freshPgSchema, PG_URL, probePostgres } from "../support/services.js";

describe("the order workflow on oncely (SQLite journal)", () => {
  it("runs every order's four effects exactly once and times each order", async () => {
    const figures = await runOncelySqlite({ orders: 12, inflight: 4 });
    expect(figures.exactlyOnce).toEqual({ ok: true, summary: "64/64 keys called exactly once" });
    expect(figures.latencies).toHaveLength(12);
  });

  it("reads the CPU the timed orders cost, the machine's and this process's", async () => {
    // Enough orders that the run spans many of /proc/stat's 10 ms ticks (Linux, where CI runs).
    const figures = await runOncelySqlite({ orders: 300, inflight: 50 });
    const cpu = cpuPerOrder(figures);
    expect(cpu?.process).toBeGreaterThan(0);
    expect(cpu?.machine).toBeGreaterThan(0);
  });

  it("runs on the in-memory test journal too, the runtime's floor", async () => {
    const figures = await runOncelyMemory({ orders: 12, inflight: 4 });
    expect(figures.system).toBe("oncely in-memory (test journal)");
    expect(figures.exactlyOnce).toEqual({ ok: true, summary: "64/64 keys called exactly once" });
  });
});

const service = await probePostgres();

describe.skipIf(!service.available)(
  `SQL statements counted on the client${service.available ? "" : ` (skipped: ${service.reason})`}`,
  () => {
    const pool = new pg.Pool({ connectionString: PG_URL, max: 2 });
    pool.on("error", () => {});
    let drop: () => Promise<void> = async () => {};
    afterAll(async () => {
      await pool.end();
      await drop();
    });

    it("count each round trip once, a transaction's COMMIT and an autocommitted write as commits, a read as none", async () => {
      const fresh = await freshPgSchema("bench_sql_count");
      drop = fresh.drop;
      const table = `"${fresh.schema}".t`;
      await pool.query(`create table ${table} (id int primary key)`);
      const counter = countSql(pg.Client);
      try {
        await pool.query(`insert into ${table} values (1)`);
        await pool.query(`select id from ${table} for update`);
        const client = await pool.connect();
        try {
          await client.query("BEGIN");
          await client.query(`insert into ${table} values (2)`);
          await client.query(`update ${table} set id = 3 where id = 2`);
          await client.query("COMMIT");
          await client.query("BEGIN");
          await client.query(`delete from ${table}`);
          await client.query("ROLLBACK");
        } finally {
          client.release();
        }
        expect(counter.read()).toEqual({ roundTrips: 9, commits: 2 });
      } finally {
        counter.stop();
      }
      // Stopped: nothing more is counted.
      await pool.query("select 1");
      expect(counter.read()).toEqual({ roundTrips: 9, commits: 2 });
    });
  },
);
