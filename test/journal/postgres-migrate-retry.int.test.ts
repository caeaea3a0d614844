import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { postgresJournal } from "../../src/postgres/index.js";
import { freshPgSchema, PG_URL, probePostgres } from "../support/services.js";

const service = await probePostgres();

describe.skipIf(!service.available)(
  `migrate() on PostgreSQL${service.available ? "" : ` (skipped: ${service.reason})`}`,
  () => {
    const admin = new pg.Client({ connectionString: PG_URL });
    const pool = new pg.Pool({ connectionString: PG_URL, max: 2 });
    pool.on("error", () => {});
    const dropped: (() => Promise<void>)[] = [];
    afterAll(async () => {
      for (const drop of dropped) await drop();
      await pool.end();
      await admin.end();
    });

    it("migrates on a fresh connection when the one it was handed dies (a process starting while connections restart)", async () => {
      await admin.connect();
      const { schema, drop } = await freshPgSchema("migrate_retry");
      dropped.push(drop);
      // The first connection migrate() checks out has its backend terminated before it is used, as
      // the chaos run's connection restarts do to a worker that is starting.
      const connect = pool.connect.bind(pool) as (callback?: unknown) => Promise<pg.PoolClient>;
      let terminated = 0;
      (pool as unknown as { connect: (callback?: unknown) => unknown }).connect = (callback?: unknown) => {
        // pool.query checks out with a callback: left as it is.
        if (callback !== undefined || terminated > 0) return connect(callback);
        terminated++;
        return connect().then(async (client) => {
          const pid = (client as unknown as { processID: number }).processID;
          await admin.query("select pg_terminate_backend($1)", [pid]);
          await new Promise((resolve) => setTimeout(resolve, 200));
          return client;
        });
      };
      const journal = postgresJournal({ connectionString: PG_URL, pool, schema });
      await journal.migrate();
      expect(terminated).toBe(1);
      const result = await journal.commit({
        stream: "order/1",
        expectedVersion: 0,
        events: [{ eventId: "e-1", type: "Placed", data: {} }],
        now: 1,
      });
      expect(result.version).toBe(1);
      await journal.close();
    });
  },
);
