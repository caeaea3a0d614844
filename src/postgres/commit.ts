import type pg from "pg";
import { CheckpointConflictError, DuplicateMessageError, InvalidInputError } from "../core/errors.js";
import { appendedRecords, type EncodedCommit } from "../journal/encode.js";
import type { CommitResult } from "../journal/types.js";
import { isUniqueViolation } from "./errors.js";
import type { Tables } from "./tables.js";

/**
 * Another writer appended to the stream between our read and our insert (a unique violation on
 * (stream, version)) or before it (the guard found another version). The caller rolls back and
 * turns it into a `VersionConflictError` carrying the version it then reads.
 */
export class StreamRace extends Error {
  constructor(readonly expected: number) {
    super("stream moved");
  }
}

/** A JSON array of objects whose values are already JSON text, built without parsing them again. */
const jsonArray = (items: Record<string, string>[]): string =>
  `[${items
    .map(
      (item) =>
        `{${Object.entries(item)
          .map(([k, v]) => `"${k}":${v}`)
          .join(",")}}`,
    )
    .join(",")}]`;
const str = (v: string | null): string => JSON.stringify(v);
// jsonb_to_recordset turns a JSON null into SQL NULL; the stored value must stay JSON null.

/**
 * One commit on a client inside BEGIN ... COMMIT (READ COMMITTED). Appends are guarded by the
 * stream's current version and, against a writer committing concurrently, by the primary key
 * on (stream, version): the second writer waits for the first and then fails. Any throw leaves
 * the transaction for the caller to roll back, so nothing of the commit is written.
 */
export async function commitTransaction(
  client: pg.PoolClient,
  t: Tables,
  c: EncodedCommit,
): Promise<{ result: CommitResult; added: number }> {
  let current = 0;
  if (c.stream !== undefined) {
    if (c.events.length > 0 && c.expectedVersion !== undefined) {
      current = c.expectedVersion;
      const inserted = await insertEvents(client, t, c, current, true);
      if (inserted === 0) throw new StreamRace(c.expectedVersion);
    } else {
      const row = await client.query(`SELECT coalesce(max(version), 0) AS v FROM ${t.events} WHERE stream = $1`, [
        c.stream,
      ]);
      current = Number(row.rows[0].v);
      // Without events this is a read-time check: a writer committing right after it is not seen.
      if (c.expectedVersion !== undefined && c.expectedVersion !== current) throw new StreamRace(c.expectedVersion);
      if (c.events.length > 0) await insertEvents(client, t, c, current, false);
    }
  }
  if (c.inbox) {
    try {
      await client.query(
        `INSERT INTO ${t.inbox} (consumer, message_id, reply, recorded_at) VALUES ($1, $2, $3::jsonb, $4)`,
        [c.inbox.consumer, c.inbox.messageId, c.inbox.reply, c.now],
      );
    } catch (error) {
      if (isUniqueViolation(error, "inbox_pkey")) throw new DuplicateMessageError(c.inbox.consumer, c.inbox.messageId);
      throw error;
    }
  }
  if (c.checkpoint) await setCheckpoint(client, t, c.checkpoint, c.now);
  if (c.snapshot) {
    await client.query(
      `INSERT INTO ${t.snapshots} (stream, version, schema_version, state, taken_at) VALUES ($1, $2, $3, $4::jsonb, $5)
       ON CONFLICT (stream) DO UPDATE SET version = excluded.version, schema_version = excluded.schema_version,
         state = excluded.state, taken_at = excluded.taken_at`,
      [c.stream, c.snapshot.version, c.snapshot.schemaVersion, c.snapshot.state, c.now],
    );
  }
  let added = 0;
  if (c.outbox.length > 0) {
    const rows = jsonArray(
      c.outbox.map((o, i) => ({
        ord: String(i),
        id: str(o.id),
        category: str(o.category),
        kind: str(o.kind),
        stream: str(o.stream),
        payload: o.payload,
        not_before: String(o.notBefore),
      })),
    );
    // ORDER BY ord: seq is drawn in that order, so rows of one commit keep the caller's order.
    const inserted = await client.query(
      `INSERT INTO ${t.outbox} (id, category, kind, stream, payload, status, attempts, not_before, result, created_at, updated_at)
       SELECT x.id, x.category, x.kind, x.stream, coalesce(x.payload, 'null'::jsonb), 'pending', 0, x.not_before, 'null'::jsonb, $2, $2
       FROM jsonb_to_recordset($1::jsonb) AS x(ord int, id text, category text, kind text, stream text, payload jsonb, not_before bigint)
       ORDER BY x.ord
       ON CONFLICT (id) DO NOTHING`,
      [rows, c.now],
    );
    added = inserted.rowCount ?? 0;
  }
  for (const done of c.outboxDone) {
    await client.query(
      `UPDATE ${t.outbox} SET status = 'done', outcome = $2, result = $3::jsonb, lease_owner = NULL, lease_until = NULL,
         updated_at = $4
       WHERE id = $1 AND status <> 'done'`,
      [done.id, done.outcome, done.result, c.now],
    );
  }
  for (const p of c.park) {
    await client.query(
      `INSERT INTO ${t.parked} (consumer, source, version, message, parked_at) VALUES ($1, $2, $3, $4::jsonb, $5)
       ON CONFLICT DO NOTHING`,
      [p.consumer, p.source, p.version, p.message, c.now],
    );
  }
  for (const p of c.unpark) {
    await client.query(`DELETE FROM ${t.parked} WHERE consumer = $1 AND source = $2 AND version = $3`, [
      p.consumer,
      p.source,
      p.version,
    ]);
  }
  for (const d of c.deadLetters) {
    await client.query(
      `INSERT INTO ${t.deadLetters}
         (id, consumer, message_id, payload, error, stack, attempts, first_failed_at, last_failed_at, status)
       VALUES ($1, $2, $3, $4::jsonb, $5, $6, $7, $8, $9, 'open') ON CONFLICT (id) DO NOTHING`,
      [d.id, d.consumer, d.messageId, d.payload, d.error, d.stack, d.attempts, d.firstFailedAt, d.lastFailedAt],
    );
  }
  // In order: a commit may upsert and then delete the same document.
  for (const d of c.documents) {
    if (d.doc === null) {
      await client.query(`DELETE FROM ${t.documents} WHERE collection = $1 AND id = $2`, [d.collection, d.id]);
    } else {
      await client.query(
        `INSERT INTO ${t.documents} (collection, id, doc, updated_at) VALUES ($1, $2, $3::jsonb, $4)
         ON CONFLICT (collection, id) DO UPDATE SET doc = excluded.doc, updated_at = excluded.updated_at`,
        [d.collection, d.id, d.doc, c.now],
      );
    }
  }
  // Delivered by the server only when the transaction commits, to every LISTENer of the schema.
  if (added > 0) await client.query("SELECT pg_notify($1, '')", [t.channel]);
  return { result: { version: current + c.events.length, events: appendedRecords(c, current) }, added };
}

/** Insert the commit's events at base+1..; `guarded` inserts nothing unless the stream is at `base`. */
async function insertEvents(
  client: pg.PoolClient,
  t: Tables,
  c: EncodedCommit,
  base: number,
  guarded: boolean,
): Promise<number> {
  const rows = jsonArray(
    c.events.map((e, i) => ({
      version: String(base + i + 1),
      event_id: str(e.eventId),
      type: str(e.type),
      data: e.data,
      causation_id: str(e.causationId),
      correlation_id: str(e.correlationId),
      schema_version: String(e.schemaVersion),
    })),
  );
  try {
    const result = await client.query(
      `INSERT INTO ${t.events}
         (stream, version, event_id, type, data, causation_id, correlation_id, recorded_at, schema_version)
       SELECT $1, x.version, x.event_id, x.type, coalesce(x.data, 'null'::jsonb), x.causation_id, x.correlation_id, $3, x.schema_version
       FROM jsonb_to_recordset($2::jsonb)
         AS x(version int, event_id text, type text, data jsonb, causation_id text, correlation_id text, schema_version int)
       WHERE NOT $4::boolean OR (SELECT coalesce(max(version), 0) FROM ${t.events} WHERE stream = $1) = $5
       ORDER BY x.version`,
      [c.stream, rows, c.now, guarded, base],
    );
    return result.rowCount ?? 0;
  } catch (error) {
    if (isUniqueViolation(error, "events_pkey")) throw new StreamRace(base);
    if (isUniqueViolation(error, "events_event_id_key")) {
      throw new InvalidInputError(`an event id of this commit is already in the journal: ${(error as Error).message}`);
    }
    throw error;
  }
}

/**
 * With `expected`, only moves a checkpoint still at that version (0 = absent). A concurrent
 * writer of the same checkpoint holds its row lock; we wait, re-check against its committed
 * value, and fail instead of overwriting it.
 */
async function setCheckpoint(
  client: pg.PoolClient,
  t: Tables,
  cp: NonNullable<EncodedCommit["checkpoint"]>,
  now: number,
): Promise<void> {
  const args = [cp.consumer, cp.source, cp.version, now];
  if (cp.expected === undefined) {
    await client.query(
      `INSERT INTO ${t.checkpoints} (consumer, source, version, updated_at) VALUES ($1, $2, $3, $4)
       ON CONFLICT (consumer, source) DO UPDATE SET version = excluded.version, updated_at = excluded.updated_at`,
      args,
    );
    return;
  }
  const moved =
    cp.expected === 0
      ? await client.query(
          `INSERT INTO ${t.checkpoints} AS c (consumer, source, version, updated_at) VALUES ($1, $2, $3, $4)
           ON CONFLICT (consumer, source) DO UPDATE SET version = excluded.version, updated_at = excluded.updated_at
           WHERE c.version = 0`,
          args,
        )
      : await client.query(
          `UPDATE ${t.checkpoints} SET version = $3, updated_at = $4
           WHERE consumer = $1 AND source = $2 AND version = $5`,
          [...args, cp.expected],
        );
  if (moved.rowCount) return;
  const actual = await client.query(`SELECT version FROM ${t.checkpoints} WHERE consumer = $1 AND source = $2`, [
    cp.consumer,
    cp.source,
  ]);
  throw new CheckpointConflictError(cp.consumer, cp.source, cp.expected, Number(actual.rows[0]?.version ?? 0));
}
