import {
  CheckpointConflictError,
  DuplicateMessageError,
  InvalidInputError,
  VersionConflictError,
} from "../base/errors.js";
import { effectKeyReuse } from "../journal/effect-key-reuse.js";
import { appendedRecords } from "../journal/encode.js";
import type { EncodedCommit } from "../journal/encoded-commit.js";
import { wakesAtCommit } from "../journal/outbox-signal.js";
import { holdsOutcomeRow } from "../journal/outcome-record.js";
import type { CommitResult, OutboxCategory } from "../journal/types.js";
import { isUniqueViolation } from "./errors.js";
import type { Sql } from "./sql.js";

/**
 * One commit inside a `BEGIN IMMEDIATE` transaction (within a group-commit batch): the write lock
 * is taken first, so the checks read the state no other writer (thread or process) can change
 * before we commit. The refusals come in the memory journal's order (version, inbox, checkpoint,
 * effect keys), and as few statements as can tell them:
 * - the version is read (one indexed max);
 * - the inbox row is inserted with ON CONFLICT DO NOTHING: not inserted is the duplicate, and it
 *   comes before any write of the commit, so that refusal needs no rollback either; a final outcome
 *   whose row the consumer holds finishes that row instead (its done transition is the record, one
 *   update), and the row is read only when the update finds no open row the consumer holds: held
 *   and done is the duplicate (nothing written yet), held by no one here goes to the inbox (see
 *   `InboxEntry`);
 * - the checkpoint is read;
 * - outbox rows are inserted with ON CONFLICT DO NOTHING before the events; the held row is read
 *   and compared only for an effect row that was not inserted (a key requested again).
 * `mark.written` turns true at the commit's first write: a refusal after it (a checkpoint or
 * effect-key conflict after the inbox insert, an event id already used) leaves a partial commit,
 * which the caller must roll back (see SqliteJournal.applyBatch).
 */

/** Whether a commit has written anything yet. */
export interface WriteMark {
  written: boolean;
}

/**
 * A commit's result, the categories and slices of the rows it inserted not leased and due now
 * (someone must claim those), and whether it appended to the published log (its readers must be woken).
 */
export interface WrittenCommit {
  result: CommitResult;
  added: { category: OutboxCategory; slice: number }[];
  published: boolean;
}

export function writeCommit(sql: Sql, c: EncodedCommit, mark: WriteMark): WrittenCommit {
  const current =
    c.stream === undefined
      ? 0
      : (sql.stmt("SELECT coalesce(max(version), 0) AS v FROM events WHERE stream = ?").get(c.stream) as { v: number })
          .v;
  if (c.stream !== undefined && c.expectedVersion !== undefined && c.expectedVersion !== current) {
    throw new VersionConflictError(c.stream, c.expectedVersion, current);
  }
  let finished: string | undefined;
  if (c.inbox) {
    // A final outcome whose row the consumer holds: the row's done transition is the record. It is
    // tried first, as one statement; only when it finds no open row the consumer holds is the row
    // read, to tell a duplicate (held and done) from a row held by no one here (the inbox records it).
    const outcomeOf = c.inbox.outcomeOf;
    if (outcomeOf !== undefined && finishHeldRow(sql, c, outcomeOf, c.inbox.consumer)) {
      finished = outcomeOf;
      mark.written = true;
    } else {
      const held = outcomeOf === undefined ? undefined : heldOutcomeRow(sql, outcomeOf, c.inbox.consumer);
      if (held?.status === "done") throw new DuplicateMessageError(c.inbox.consumer, c.inbox.messageId);
      if (!held) {
        const stored = sql
          .stmt(
            "INSERT INTO inbox (consumer, message_id, reply, recorded_at) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING",
          )
          .run(c.inbox.consumer, c.inbox.messageId, c.inbox.reply, c.now);
        if (stored.changes === 0) throw new DuplicateMessageError(c.inbox.consumer, c.inbox.messageId);
        mark.written = true;
      }
    }
  }
  for (const { consumer, source, expected } of c.checkpoints) {
    if (expected === undefined) continue;
    const row = sql.stmt("SELECT version FROM checkpoints WHERE consumer = ? AND source = ?").get(consumer, source) as
      | { version: number }
      | undefined;
    const actual = row?.version ?? 0;
    if (actual !== expected) throw new CheckpointConflictError(consumer, source, expected, actual);
  }
  return applyWrites(sql, c, current, mark, finished);
}

/**
 * The done transition of the outbox row a final outcome finishes, when `consumer` holds it and it
 * is not done yet (see `holdsOutcomeRow`, stated here in SQL); true when it was made. The commit's
 * first done entry for the row is the one applied, as in the done loop of `applyWrites`.
 */
function finishHeldRow(sql: Sql, c: EncodedCommit, id: string, consumer: string): boolean {
  const done = c.outboxDone.find((d) => d.id === id);
  if (!done) return false; // encodeCommit refuses such a commit; kept total for the type
  return sql.stmt(HELD_DONE_SQL).run(done.outcome, done.result, c.now, id, consumer).changes === 1;
}

const DONE_SQL = `UPDATE outbox SET status = 'done', outcome = ?, result = ?, lease_owner = NULL, lease_until = NULL,
  updated_at = ? WHERE id = ? AND status <> 'done'`;
/** The same, only for a row `consumer` holds (`holdsOutcomeRow`). */
const HELD_DONE_SQL = `${DONE_SQL} AND stream = ? AND category <> 'event'`;

/** The outbox row a final outcome finishes, when `consumer` holds it (see `holdsOutcomeRow`). */
function heldOutcomeRow(sql: Sql, id: string, consumer: string): { status: string } | undefined {
  const row = sql.stmt("SELECT stream, category, status FROM outbox WHERE id = ?").get(id) as
    | { stream: string; category: OutboxCategory; status: string }
    | undefined;
  return holdsOutcomeRow(row, consumer) ? row : undefined;
}

/** An effect row whose key was already held (not inserted): its reuse error, if the request differs. */
function heldEffectReuse(sql: Sql, row: EncodedCommit["outbox"][number]) {
  const held = sql.stmt("SELECT stream, kind, payload FROM outbox WHERE id = ?").get(row.id) as
    | { stream: string; kind: string; payload: string }
    | undefined;
  return (
    held &&
    effectKeyReuse(row.id, { ...held, payload: JSON.parse(held.payload) }, { ...row, payload: JSON.parse(row.payload) })
  );
}

/** The rest of a commit at version `current`: outbox rows (with the effect-key check), then the other writes. */
function applyWrites(
  sql: Sql,
  c: EncodedCommit,
  current: number,
  mark: WriteMark,
  finished: string | undefined,
): WrittenCommit {
  const added: { category: OutboxCategory; slice: number }[] = [];
  const inserted: { id: string; seq: number }[] = [];
  // seq = max + 1 is safe: the write lock is held, and rows are never deleted.
  const insertOutbox = sql.stmt(
    `INSERT INTO outbox (id, seq, category, kind, stream, payload, status, attempts, not_before, lease_owner, lease_until,
       result, created_at, updated_at, slice)
     VALUES (?, (SELECT coalesce(max(seq), 0) + 1 FROM outbox), ?, ?, ?, ?, 'pending', ?, ?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (id) DO NOTHING RETURNING seq`,
  );
  for (const row of c.outbox) {
    const got = insertOutbox.get(
      row.id,
      row.category,
      row.kind,
      row.stream,
      row.payload,
      row.attempts,
      row.notBefore,
      row.leaseOwner,
      row.leaseUntil,
      row.result,
      c.now,
      c.now,
      row.slice,
    ) as { seq: number } | undefined;
    if (!got) {
      // A key this commit itself inserted is no reuse: the journal compares with rows held before it.
      if (row.category !== "effect" || inserted.some((r) => r.id === row.id)) continue;
      const reused = heldEffectReuse(sql, row);
      if (reused) throw reused;
      continue;
    }
    mark.written = true;
    inserted.push({ id: row.id, seq: got.seq });
    if (wakesAtCommit(row, c.now)) added.push({ category: row.category, slice: row.slice });
  }
  // From here on every throw is a write that failed: the caller rolls back (as for any partial commit).
  mark.written = true;
  const insertEvent = sql.stmt(
    `INSERT INTO events (stream, version, event_id, type, data, causation_id, correlation_id, recorded_at, schema_version)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  c.events.forEach((e, index) => {
    try {
      insertEvent.run(
        c.stream,
        current + index + 1,
        e.eventId,
        e.type,
        e.data,
        e.causationId,
        e.correlationId,
        c.now,
        e.schemaVersion,
      );
    } catch (error) {
      if (isUniqueViolation(error, "events", "event_id")) {
        throw new InvalidInputError(`event id "${e.eventId}" is already in the journal`);
      }
      throw error;
    }
  });
  if (c.snapshot) {
    sql
      .stmt(
        `INSERT INTO snapshots (stream, version, schema_version, state, taken_at) VALUES (?, ?, ?, ?, ?)
         ON CONFLICT (stream) DO UPDATE SET version = excluded.version, schema_version = excluded.schema_version,
           state = excluded.state, taken_at = excluded.taken_at`,
      )
      .run(c.stream, c.snapshot.version, c.snapshot.schemaVersion, c.snapshot.state, c.now);
  }
  const markDone = sql.stmt(DONE_SQL);
  // The row finished as the outcome's record is done already: its entries would change nothing.
  for (const done of c.outboxDone) if (done.id !== finished) markDone.run(done.outcome, done.result, c.now, done.id);
  for (const checkpoint of c.checkpoints) {
    sql
      .stmt(
        `INSERT INTO checkpoints (consumer, source, version, updated_at) VALUES (?, ?, ?, ?)
         ON CONFLICT (consumer, source) DO UPDATE SET version = excluded.version, updated_at = excluded.updated_at`,
      )
      .run(checkpoint.consumer, checkpoint.source, checkpoint.version, c.now);
  }
  const park = sql.stmt(
    `INSERT INTO parked (consumer, source, version, message, parked_at) VALUES (?, ?, ?, ?, ?)
     ON CONFLICT DO NOTHING`,
  );
  for (const p of c.park) park.run(p.consumer, p.source, p.version, p.message, c.now);
  const unpark = sql.stmt("DELETE FROM parked WHERE consumer = ? AND source = ? AND version = ?");
  for (const p of c.unpark) unpark.run(p.consumer, p.source, p.version);
  const dead = sql.stmt(
    `INSERT INTO dead_letters (id, consumer, message_id, payload, error, stack, attempts, first_failed_at, last_failed_at, status)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'open') ON CONFLICT (id) DO NOTHING`,
  );
  for (const d of c.deadLetters) {
    dead.run(d.id, d.consumer, d.messageId, d.payload, d.error, d.stack, d.attempts, d.firstFailedAt, d.lastFailedAt);
  }
  const upsertDoc = sql.stmt(
    `INSERT INTO documents (collection, id, doc, updated_at) VALUES (?, ?, ?, ?)
     ON CONFLICT (collection, id) DO UPDATE SET doc = excluded.doc, updated_at = excluded.updated_at`,
  );
  const deleteDoc = sql.stmt("DELETE FROM documents WHERE collection = ? AND id = ?");
  // In order: a commit may upsert and then delete the same document.
  for (const d of c.documents) {
    if (d.doc === null) deleteDoc.run(d.collection, d.id);
    else upsertDoc.run(d.collection, d.id, d.doc, c.now);
  }
  // Last: SQLite has one writer at a time, so positions follow commit order (see append-published.ts).
  let published = false;
  const append = sql.stmt(
    `INSERT INTO published (message_id, subject, body, published_at, slice) VALUES (?, ?, ?, ?, ?)
     ON CONFLICT (message_id) DO NOTHING`,
  );
  for (const p of c.published)
    published = append.run(p.messageId, p.subject, p.body, c.now, p.slice).changes > 0 || published;
  return {
    result: { version: current + c.events.length, events: appendedRecords(c, current), inserted },
    added,
    published,
  };
}
