import type pg from "pg";
import { commitFunctionSql } from "./commit-function.js";
import { commitJsonFunctionSql } from "./commit-json-function.js";
import { commitSetFunctionSql } from "./commit-set-function.js";
import { openRowIndexesSql, streamOrderWithoutEffectsSql } from "./key-lookup-plans.js";
import { publishBatchFunctionSql, publishedLogSql } from "./published-log.js";
import { withClient } from "./sql.js";
import type { Tables } from "./tables.js";

/**
 * Versioned schema. Each migration runs once, in its own transaction that first takes a
 * transaction-scoped advisory lock per schema: several processes calling `migrate()` at once
 * queue on the lock, and each one that follows sees the version already recorded.
 * Append new versions; never edit an applied one. Text columns that are sorted or compared
 * by prefix use the "C" collation, so order is by code point as in the other back ends.
 */
export const migrations: { version: number; sql: (t: Tables) => string }[] = [
  {
    version: 1,
    sql: (t) => `
      CREATE TABLE ${t.events} (
        global_position bigint GENERATED ALWAYS AS IDENTITY,
        stream text COLLATE "C" NOT NULL,
        version integer NOT NULL,
        event_id text NOT NULL,
        type text NOT NULL,
        data jsonb NOT NULL,
        causation_id text,
        correlation_id text,
        recorded_at bigint NOT NULL,
        schema_version integer NOT NULL,
        CONSTRAINT events_pkey PRIMARY KEY (stream, version),
        CONSTRAINT events_event_id_key UNIQUE (event_id),
        CONSTRAINT events_global_position_key UNIQUE (global_position)
      );
      CREATE TABLE ${t.snapshots} (
        stream text COLLATE "C" PRIMARY KEY,
        version integer NOT NULL,
        schema_version integer NOT NULL,
        state jsonb NOT NULL,
        taken_at bigint NOT NULL
      );
      CREATE TABLE ${t.outbox} (
        id text PRIMARY KEY,
        seq bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
        category text NOT NULL,
        kind text NOT NULL,
        stream text COLLATE "C" NOT NULL,
        payload jsonb NOT NULL,
        status text NOT NULL,
        attempts integer NOT NULL,
        not_before bigint NOT NULL,
        lease_owner text,
        lease_until bigint,
        last_error text,
        outcome text,
        result jsonb NOT NULL,
        created_at bigint NOT NULL,
        updated_at bigint NOT NULL
      );
      CREATE INDEX outbox_claim ON ${t.outbox} (status, not_before);
      CREATE INDEX outbox_stream_order ON ${t.outbox} (stream, category, seq);
      CREATE TABLE ${t.inbox} (
        consumer text NOT NULL,
        message_id text NOT NULL,
        reply jsonb NOT NULL,
        recorded_at bigint NOT NULL,
        CONSTRAINT inbox_pkey PRIMARY KEY (consumer, message_id)
      );
      CREATE INDEX inbox_recorded_at ON ${t.inbox} (recorded_at);
      CREATE TABLE ${t.checkpoints} (
        consumer text NOT NULL,
        source text NOT NULL,
        version integer NOT NULL,
        updated_at bigint NOT NULL,
        PRIMARY KEY (consumer, source)
      );
      CREATE TABLE ${t.parked} (
        consumer text NOT NULL,
        source text COLLATE "C" NOT NULL,
        version integer NOT NULL,
        message jsonb NOT NULL,
        parked_at bigint NOT NULL,
        PRIMARY KEY (consumer, source, version)
      );
      CREATE TABLE ${t.deadLetters} (
        id text COLLATE "C" PRIMARY KEY,
        consumer text NOT NULL,
        message_id text,
        payload jsonb NOT NULL,
        error text NOT NULL,
        stack text,
        attempts integer NOT NULL,
        first_failed_at bigint NOT NULL,
        last_failed_at bigint NOT NULL,
        status text NOT NULL,
        resolved_at bigint
      );
      CREATE INDEX dead_letters_list ON ${t.deadLetters} (consumer, status, first_failed_at);
      CREATE TABLE ${t.documents} (
        collection text NOT NULL,
        id text COLLATE "C" NOT NULL,
        doc jsonb NOT NULL,
        updated_at bigint NOT NULL,
        PRIMARY KEY (collection, id)
      );
    `,
  },
  // Group commit: one statement applies a batch of commits, each in its own subtransaction.
  { version: 2, sql: (t) => commitFunctionSql(t) },
  // The same function, now refusing an effect key reused by another stream or with another input.
  { version: 3, sql: (t) => commitFunctionSql(t, { checkEffectKeys: true }) },
  // The journal transport's published log and its append function.
  { version: 4, sql: (t) => publishedLogSql(t) },
  // Group commit set-wise: one statement per table for the whole batch, oncely_commit as fallback.
  { version: 5, sql: (t) => commitSetFunctionSql(t) },
  // The same check, leaving out the trace context an effect row's payload carries (`payload.trace`).
  { version: 6, sql: (t) => commitFunctionSql(t, { checkEffectKeys: "without-trace" }) },
  // Both commit functions plan key lookups as index probes (KEY_LOOKUP_PLANS), and the outbox's claim
  // and stream-order indexes keep only the rows still to run.
  {
    version: 7,
    sql: (t) =>
      commitFunctionSql(t, { checkEffectKeys: "without-trace", keyLookups: true }) +
      commitSetFunctionSql(t, { keyLookups: true }) +
      openRowIndexesSql(t.qschema, t.outbox),
  },
  // The batch as one JSON text in and out: no array literal to escape on the way in or parse on the way back.
  { version: 8, sql: (t) => commitJsonFunctionSql(t) },
  // The set path in fewer passes: the guards in one scan of the batch, no per-commit joins.
  { version: 9, sql: (t) => commitJsonFunctionSql(t) },
  // A final outcome whose row its consumer holds is recorded by the row's done transition, not an inbox row;
  // and the keyed batch function, to which the client names the commits sharing a key and which answers base versions.
  {
    version: 10,
    sql: (t) =>
      commitFunctionSql(t, { checkEffectKeys: "without-trace", keyLookups: true }) +
      commitJsonFunctionSql(t) +
      commitJsonFunctionSql(t, { keyed: true }),
  },
  // Each commit's events, outbox rows and done rows packed as arrays: less for the server to parse.
  { version: 11, sql: (t) => commitJsonFunctionSql(t, { packed: true }) },
  // The same, with no statement for parts no commit of the batch has: snapshots, and the commits
  // the set path left unanswered (each such statement costs its executor start every batch).
  { version: 12, sql: (t) => commitJsonFunctionSql(t, { packed: true }) },
  // The stream-order index without effect rows: only claims in stream order read it, never for effects.
  { version: 13, sql: (t) => streamOrderWithoutEffectsSql(t.qschema, t.outbox) },
  // The published log's appends that arrive together as one call and one transaction.
  { version: 14, sql: (t) => publishBatchFunctionSql(t) },
];

export async function migrate(pool: pg.Pool, t: Tables): Promise<void> {
  await withClient(pool, async (client, markBroken) => {
    for (const migration of migrations) {
      await client.query("BEGIN");
      try {
        await client.query("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", [`oncely.migrate:${t.schema}`]);
        // Checked before CREATE SCHEMA: a role without CREATE on the database can still use an existing schema.
        const schema = await client.query("SELECT 1 FROM pg_namespace WHERE nspname = $1", [t.schema]);
        if (!schema.rowCount) await client.query(`CREATE SCHEMA ${t.qschema}`);
        // The bookkeeping table is the one object made with IF NOT EXISTS: it must exist to be asked.
        await client.query(
          `CREATE TABLE IF NOT EXISTS ${t.migrations} (version integer PRIMARY KEY, applied_at bigint NOT NULL)`,
        );
        const applied = await client.query(`SELECT 1 FROM ${t.migrations} WHERE version = $1`, [migration.version]);
        if (!applied.rowCount) {
          await client.query(migration.sql(t));
          // applied_at is audit only; it never takes part in a decision, so the wall clock is fine here.
          await client.query(`INSERT INTO ${t.migrations} (version, applied_at) VALUES ($1, $2)`, [
            migration.version,
            Date.now(),
          ]);
        }
        await client.query("COMMIT");
      } catch (error) {
        await client.query("ROLLBACK").catch(markBroken);
        throw error;
      }
    }
  });
}
