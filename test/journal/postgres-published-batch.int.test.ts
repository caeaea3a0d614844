import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { StorageUnavailableError, TerminalStorageError } from "../../src/base/errors.js";
import type { NewPublished } from "../../src/journal/types.js";
import { postgresJournal } from "../../src/postgres/index.js";
import { withCountingJournal } from "../support/pg-statements.js";
import { migratedPgSchema, PG_URL, probePostgres } from "../support/services.js";
import { waitFor } from "../support/wait.js";

/**
 * The published log's appends on PostgreSQL: those that arrive together go as one call of
 * `oncely_publish_batch` (one transaction), each keeping its own fate, and a connection lost
 * during the call leaves every one of them to be appended again, once.
 */
const service = await probePostgres();
const entry = (id: string): NewPublished => ({ messageId: id, subject: `shop.${id}`, body: JSON.stringify({ id }) });

describe.skipIf(!service.available)(
  `postgres published-log appends${service.available ? "" : ` (skipped: ${service.reason})`}`,
  () => {
    let schema = "";
    let drop: () => Promise<void> = async () => {};
    beforeAll(async () => {
      ({ schema, drop } = await migratedPgSchema("pg_published_batch"));
    });
    afterAll(async () => drop());

    it("appends a burst as one call in submit order; a message id twice in it gets one position", async () => {
      await withCountingJournal(schema, `oncely-test-published-${process.pid}`, async (journal, { calls }) => {
        const ids = ["b1", "b2", "b3", "b1", "b4"];
        const positions = await Promise.all(ids.map((id, i) => journal.appendPublished(entry(id), 10 + i)));
        expect(calls("oncely_publish_batch")).toBe(1);
        expect(calls("oncely_publish")).toBe(0);
        expect(positions[3]).toBe(positions[0]);
        const distinct = [positions[0], positions[1], positions[2], positions[4]] as number[];
        expect(distinct).toEqual([...distinct].sort((a, b) => a - b));
        expect(new Set(distinct).size).toBe(4);
        const log = (await journal.readPublished(0)).filter((p) => p.messageId.startsWith("b"));
        expect(log.map((p) => [p.messageId, p.position, p.publishedAt])).toEqual([
          ["b1", positions[0], 10],
          ["b2", positions[1], 11],
          ["b3", positions[2], 12],
          ["b4", positions[4], 14],
        ]);
      });
    });

    it("reads of the log that arrive together (its readers, woken by one append) are one statement, each its own page", async () => {
      await withCountingJournal(schema, `oncely-test-published-reads-${process.pid}`, async (journal, { matching }) => {
        const positions = [];
        for (const id of ["p1", "p2", "p3"]) positions.push(await journal.appendPublished(entry(id), 40));
        const [p1, , p3] = positions as [number, number, number];
        const ids = (page: { messageId: string }[]) => page.map((p) => p.messageId).filter((id) => id.startsWith("p"));
        const [all, afterFirst, firstTwo, none] = await Promise.all([
          journal.readPublished(0),
          journal.readPublished(p1),
          journal.readPublished(p1 - 1, 2),
          journal.readPublished(p3),
        ]);
        expect(matching(/unnest\(\$1::bigint\[\], \$2::bigint\[\]\)/)).toBe(1);
        expect(ids(all)).toEqual(["p1", "p2", "p3"]);
        expect(ids(afterFirst)).toEqual(["p2", "p3"]);
        expect(ids(firstTwo)).toEqual(["p1", "p2"]);
        expect(none).toEqual([]);
      });
    });

    it("an entry the server refuses fails alone; the others of its burst are appended", async () => {
      await withCountingJournal(schema, `oncely-test-published-refused-${process.pid}`, async (journal, { calls }) => {
        const ids = ["r1", "r2\u0000nul", "r3"];
        const settled = await Promise.allSettled(ids.map((id) => journal.appendPublished(entry(id), 20)));
        expect(calls("oncely_publish_batch")).toBe(1);
        expect(settled[0]?.status).toBe("fulfilled");
        expect(settled[2]?.status).toBe("fulfilled");
        expect(settled[1]?.status === "rejected" && settled[1].reason).toBeInstanceOf(TerminalStorageError);
        const log = (await journal.readPublished(0)).filter((p) => p.messageId.startsWith("r"));
        expect(log.map((p) => p.messageId)).toEqual(["r1", "r3"]);
      });
    });

    it("a connection lost during the call leaves every append of it to be made again, and each lands once", async () => {
      const name = `oncely-test-published-lost-${process.pid}-${Date.now()}`;
      const pool = new pg.Pool({ connectionString: PG_URL, max: 2, application_name: name });
      const journal = postgresJournal({ connectionString: PG_URL, schema, pool });
      // Another appender holds the log's lock, so the batch waits in its call; then its backend dies.
      const holder = new pg.Client({ connectionString: PG_URL });
      await holder.connect();
      await holder.query("BEGIN");
      await holder.query("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", [`oncely.published:${schema}`]);
      const admin = new pg.Client({ connectionString: PG_URL });
      await admin.connect();
      try {
        const ids = ["l1", "l2", "l3"];
        const settled = Promise.allSettled(ids.map((id) => journal.appendPublished(entry(id), 30)));
        await waitFor(
          async () =>
            ((
              await admin.query(
                `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
                 WHERE application_name = $1 AND wait_event_type = 'Lock' AND query LIKE '%oncely_publish_batch%'`,
                [name],
              )
            ).rowCount ?? 0) > 0,
          "the batch to wait on the log's lock",
          10_000,
        );
        for (const outcome of await settled) {
          expect(outcome.status === "rejected" && outcome.reason).toBeInstanceOf(StorageUnavailableError);
        }
        await holder.query("COMMIT");
        expect((await journal.readPublished(0)).filter((p) => p.messageId.startsWith("l"))).toEqual([]);
        const first = await Promise.all(ids.map((id) => journal.appendPublished(entry(id), 31)));
        // Appended again after it landed (its answer lost): the same position, not a second entry.
        const again = await Promise.all(ids.map((id) => journal.appendPublished(entry(id), 32)));
        expect(again).toEqual(first);
        const log = (await journal.readPublished(0)).filter((p) => p.messageId.startsWith("l"));
        expect(log.map((p) => p.messageId)).toEqual(ids);
      } finally {
        await holder.end().catch(() => {});
        await admin.end();
        await journal.close();
        await pool.end();
      }
    });
  },
);
