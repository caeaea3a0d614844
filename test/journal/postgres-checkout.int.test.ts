import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { withClient } from "../../src/postgres/sql.js";
import { PG_URL, probePostgres } from "../support/services.js";

const service = await probePostgres();

describe.skipIf(!service.available)(
  `a checked-out PostgreSQL client${service.available ? "" : ` (skipped: ${service.reason})`}`,
  () => {
    const pool = new pg.Pool({ connectionString: PG_URL, max: 2 });
    pool.on("error", () => {});
    const admin = new pg.Client({ connectionString: PG_URL });
    afterAll(async () => {
      await pool.end();
      await admin.end();
    });

    it("survives its backend being terminated between two statements, and is not reused", async () => {
      await admin.connect();
      const failure = await withClient(pool, async (client) => {
        const { rows } = await client.query<{ pid: number }>("select pg_backend_pid() as pid");
        // Killed while idle between statements: pg emits 'error' on the client. Unhandled, that is
        // an uncaught exception that ends the process (vitest reports it and fails this file).
        await admin.query("select pg_terminate_backend($1)", [rows[0]?.pid]);
        await new Promise((resolve) => setTimeout(resolve, 300));
        return client.query("select 1").then(
          () => undefined,
          (error: Error) => error,
        );
      });
      expect(failure).toBeInstanceOf(Error);
      // The broken connection was destroyed, not returned: the pool hands out a working one.
      const { rows } = await pool.query("select 1 as ok");
      expect(rows[0]?.ok).toBe(1);
    });
  },
);
