import { TerminalError } from "../base/errors.js";
import type { Sql } from "./sql.js";

/**
 * Versioned schema, numbered on its own (1, 2, 3... without a gap; PostgreSQL's numbering is
 * another). Each migration runs once, inside its own `BEGIN IMMEDIATE` transaction that also
 * re-reads the applied versions, so several processes migrating one file at once serialize on
 * SQLite's write lock and each version is applied exactly once. Each is recorded with its name.
 * Append new versions; never edit an applied one.
 */
export const migrations: { version: number; name: string; sql: string }[] = [
  {
    version: 1,
    name: "tables",
    sql: `
      CREATE TABLE events (
        global_position INTEGER PRIMARY KEY AUTOINCREMENT,
        stream TEXT NOT NULL,
        version INTEGER NOT NULL,
        event_id TEXT NOT NULL UNIQUE,
        type TEXT NOT NULL,
        data TEXT NOT NULL,
        causation_id TEXT,
        correlation_id TEXT,
        recorded_at INTEGER NOT NULL,
        schema_version INTEGER NOT NULL,
        UNIQUE (stream, version)
      );
      CREATE TABLE snapshots (
        stream TEXT PRIMARY KEY,
        version INTEGER NOT NULL,
        schema_version INTEGER NOT NULL,
        state TEXT NOT NULL,
        taken_at INTEGER NOT NULL
      );
      CREATE TABLE outbox (
        id TEXT PRIMARY KEY,
        seq INTEGER NOT NULL UNIQUE,
        category TEXT NOT NULL,
        kind TEXT NOT NULL,
        stream TEXT NOT NULL,
        payload TEXT NOT NULL,
        status TEXT NOT NULL,
        attempts INTEGER NOT NULL,
        not_before INTEGER NOT NULL,
        lease_owner TEXT,
        lease_until INTEGER,
        last_error TEXT,
        outcome TEXT,
        result TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL
      );
      CREATE INDEX outbox_claim ON outbox (status, not_before);
      CREATE INDEX outbox_stream_order ON outbox (stream, category, seq);
      CREATE TABLE inbox (
        consumer TEXT NOT NULL,
        message_id TEXT NOT NULL,
        reply TEXT NOT NULL,
        recorded_at INTEGER NOT NULL,
        PRIMARY KEY (consumer, message_id)
      );
      CREATE INDEX inbox_recorded_at ON inbox (recorded_at);
      CREATE TABLE checkpoints (
        consumer TEXT NOT NULL,
        source TEXT NOT NULL,
        version INTEGER NOT NULL,
        updated_at INTEGER NOT NULL,
        PRIMARY KEY (consumer, source)
      );
      CREATE TABLE parked (
        consumer TEXT NOT NULL,
        source TEXT NOT NULL,
        version INTEGER NOT NULL,
        message TEXT NOT NULL,
        parked_at INTEGER NOT NULL,
        PRIMARY KEY (consumer, source, version)
      );
      CREATE TABLE dead_letters (
        id TEXT PRIMARY KEY,
        consumer TEXT NOT NULL,
        message_id TEXT,
        payload TEXT NOT NULL,
        error TEXT NOT NULL,
        stack TEXT,
        attempts INTEGER NOT NULL,
        first_failed_at INTEGER NOT NULL,
        last_failed_at INTEGER NOT NULL,
        status TEXT NOT NULL,
        resolved_at INTEGER
      );
      CREATE INDEX dead_letters_list ON dead_letters (consumer, status, first_failed_at);
      CREATE TABLE documents (
        collection TEXT NOT NULL,
        id TEXT NOT NULL,
        doc TEXT NOT NULL,
        updated_at INTEGER NOT NULL,
        PRIMARY KEY (collection, id)
      );
    `,
  },
  // The published log of the journal transport.
  // AUTOINCREMENT: a position is never used again, even after retention deleted the newest entries.
  {
    version: 2,
    name: "published_log",
    sql: `
      CREATE TABLE published (
        position INTEGER PRIMARY KEY AUTOINCREMENT,
        message_id TEXT NOT NULL UNIQUE,
        subject TEXT NOT NULL,
        body TEXT NOT NULL,
        published_at INTEGER NOT NULL
      );
    `,
  },
  // The outbox's claim and stream-order indexes hold only unfinished rows (as PostgreSQL's do), and the stream-order index no effect rows: only claims in stream order read it
  // (the event relay's), and each effect row paid an entry at a random page (its stream) that
  // nothing looked up, and a page written to the WAL for it. A finished row leaves the claim index
  // instead of moving within it. Measured on the order workflow (`node bench/workflow.js sqlite
  // --orders 10000 --warmup 1000`, built sources, eight pairs): 4,119 orders/s mean against 3,896.
  {
    version: 3,
    name: "open_row_indexes",
    sql: `
      DROP INDEX outbox_claim;
      CREATE INDEX outbox_claim ON outbox (status, not_before) WHERE status NOT IN ('done', 'dead');
      DROP INDEX outbox_stream_order;
      CREATE INDEX outbox_stream_order ON outbox (stream, category, seq)
        WHERE status NOT IN ('done', 'dead') AND category <> 'effect';
    `,
  },
  // Each outbox row's slice (see src/journal/outbox-slice.ts), so that a worker claims only the rows of
  // the slices it owns. Rows already there are backfilled by \`oncely_outbox_slice\`, the same TypeScript
  // function the journal computes new rows' slices with, registered on the connection (journal.ts).
  // No index: one process owns every slice of a SQLite file, and its claims have no slice filter.
  {
    version: 4,
    name: "outbox_slices",
    sql: `
      ALTER TABLE outbox ADD COLUMN slice INTEGER NOT NULL DEFAULT 0;
      UPDATE outbox SET slice = oncely_outbox_slice(category, stream, payload);
    `,
  },
  // The console's pages (src/sqlite/console-queries.ts): each filter an index whose last columns
  // are the page's sort key, so a page reads limit + 1 entries of one index whatever the table's
  // size. The open-rows one holds unfinished rows only, in creation order (a row leaves it when done, as it leaves the
  // claim index): a page of done rows walks the creation-order index instead. Readers of the
  // published log are found by source (the consumer-lag page).
  {
    version: 5,
    name: "console_indexes",
    sql: `
      CREATE INDEX outbox_page ON outbox (category, created_at, seq);
      CREATE INDEX outbox_page_open ON outbox (category, created_at, seq)
        WHERE status NOT IN ('done', 'dead');
      CREATE INDEX outbox_page_kind ON outbox (category, kind, created_at, seq);
      CREATE INDEX outbox_page_stream ON outbox (stream, category, created_at, seq);
      CREATE INDEX dead_letters_page ON dead_letters (last_failed_at, id);
      CREATE INDEX dead_letters_page_status ON dead_letters (status, last_failed_at, id);
      CREATE INDEX dead_letters_page_consumer ON dead_letters (consumer, status, last_failed_at, id);
      CREATE INDEX checkpoints_source ON checkpoints (source);
    `,
  },
  // The published log's slices (docs/design/event-partitions.md): each entry's slice, the slice of
  // its producing aggregate's id, so that a reader owning some slices reads only theirs. Entries
  // already there are backfilled by \`oncely_published_slice\` (the TypeScript function the journal
  // registers on the connection: the body's aggregateId, else the message id). The index serves a
  // read of some slices after a position (slice IN (...) AND position > ?).
  {
    version: 6,
    name: "published_slices",
    sql: `
      ALTER TABLE published ADD COLUMN slice INTEGER NOT NULL DEFAULT 0;
      UPDATE published SET slice = oncely_published_slice(body, message_id);
      CREATE INDEX published_slice ON published (slice, position);
    `,
  },
  // One console index fewer on the outbox (PostgreSQL dropped its own in its 0007): only a page of
  // one kind read outbox_page_kind, and that page now walks the creation-order index it shares with
  // the other pages (outbox_page, or outbox_page_open for open rows), checking the kind row by row
  // as it checks the text filter and Completed/Failed, and stops at limit + 1 rows: no scan of the
  // table and no sort (test/journal/sqlite-console-plan.int.test.ts). The price is on rare kinds: a
  // page reads about limit × (rows of its category / rows of the kind) entries, and a kind with no
  // row walks the whole category (20,000 effect rows: 2.6 ms a page against 0.02 with the index; a
  // kind of one row in ten: 0.26 ms against 0.18). Each outbox row paid an entry in it at insert:
  // the file grows 652 B an effect without it against 685 B with it (50 actors, 10,000 effects,
  // 2026-12-05). The checkpoint reads need no index of their own: each is a point read of the
  // primary key (consumer, source), or one source's readers through checkpoints_source.
  {
    version: 7,
    name: "drop_outbox_page_kind",
    sql: `
      DROP INDEX outbox_page_kind;
    `,
  },
];

/**
 * Files migrated before SQLite had its own numbering recorded PostgreSQL's version numbers, in a
 * bookkeeping table without a `name` column: 1, 4 and 13 for what are now 1, 2 and 3, the same SQL.
 */
const SHARED_NUMBERING = new Map([
  [1, 1],
  [4, 2],
  [13, 3],
]);

const BOOKKEEPING =
  "CREATE TABLE IF NOT EXISTS oncely_schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)";

/**
 * A file of the shared numbering gets its versions recorded in this one (no table changes: each
 * version's SQL is the same); a version it does not know is refused, naming what to do.
 */
function renumber(sql: Sql): void {
  const columns = sql.db.prepare("PRAGMA table_info(oncely_schema_migrations)").all() as { name: string }[];
  if (columns.length === 0 || columns.some((c) => c.name === "name")) return;
  const recorded = sql.db
    .prepare("SELECT version, applied_at FROM oncely_schema_migrations ORDER BY version")
    .all() as {
    version: number;
    applied_at: number;
  }[];
  const unknown = recorded.filter((r) => !SHARED_NUMBERING.has(r.version)).map((r) => r.version);
  if (unknown.length > 0) {
    throw new TerminalError(
      `this SQLite file records schema versions ${unknown.join(", ")}, which no version of oncely's SQLite ` +
        "schema had: it was not made by oncely, or by a version this one cannot upgrade. Use a new file.",
    );
  }
  sql.db.exec("DROP TABLE oncely_schema_migrations");
  sql.db.exec(BOOKKEEPING);
  const insert = sql.db.prepare("INSERT INTO oncely_schema_migrations (version, name, applied_at) VALUES (?, ?, ?)");
  for (const r of recorded) {
    const version = SHARED_NUMBERING.get(r.version) as number;
    insert.run(version, migrations[version - 1]?.name, r.applied_at);
  }
}

export function migrate(sql: Sql): void {
  sql.db.transaction(() => renumber(sql)).immediate();
  // The bookkeeping table itself is the one object created with IF NOT EXISTS: it must exist
  // before anyone can ask which versions are applied.
  sql.db.exec(BOOKKEEPING);
  for (const migration of migrations) {
    sql.db
      .transaction(() => {
        const applied = sql.db
          .prepare("SELECT 1 FROM oncely_schema_migrations WHERE version = ?")
          .get(migration.version);
        if (applied) return;
        sql.db.exec(migration.sql);
        // applied_at is audit only; it never takes part in a decision, so the wall clock is fine here.
        sql.db
          .prepare("INSERT INTO oncely_schema_migrations (version, name, applied_at) VALUES (?, ?, ?)")
          .run(migration.version, migration.name, Date.now());
      })
      .immediate();
  }
}
