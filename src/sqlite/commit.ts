import {
  CheckpointConflictError,
  DuplicateMessageError,
  InvalidInputError,
  VersionConflictError,
} from "../base/errors.js";
import { effectKeyReuse } from "../journal/effect-key-reuse.js";
import { appendedRecords, type EncodedCommit } from "../journal/encode.js";
import type { CommitResult } from "../journal/types.js";
import { isUniqueViolation } from "./errors.js";
import type { Sql } from "./sql.js";

/**
 * One commit inside a `BEGIN IMMEDIATE` transaction (within a group-commit batch): the write lock
 * is taken first, so the checks read the state no other writer (thread or process) can change
 * before we commit. `checkCommit` runs every check, in the memory journal's order (version,
 * inbox, checkpoint, effect keys), and writes nothing: a refusal needs no rollback. `applyCommit`
 * then writes; an error there leaves a partial commit that the caller must roll back.
 *
 * The checks of a commit, before any write; throws the refusal. Returns the stream's version.
 */
export function checkCommit(sql: Sql, c: EncodedCommit): number {
  const current =
    c.stream === undefined
      ? 0
      : (sql.stmt("SELECT coalesce(max(version), 0) AS v FROM events WHERE stream = ?").get(c.stream) as { v: number })
          .v;
  if (c.stream !== undefined && c.expectedVersion !== undefined && c.expectedVersion !== current) {
    throw new VersionConflictError(c.stream, c.expectedVersion, current);
  }
  if (
    c.inbox &&
    sql.stmt("SELECT 1 FROM inbox WHERE consumer = ? AND message_id = ?").get(c.inbox.consumer, c.inbox.messageId)
  ) {
    throw new DuplicateMessageError(c.inbox.consumer, c.inbox.messageId);
  }
  if (c.checkpoint?.expected !== undefined) {
    const { consumer, source, expected } = c.checkpoint;
    const row = sql.stmt("SELECT version FROM checkpoints WHERE consumer = ? AND source = ?").get(consumer, source) as
      | { version: number }
      | undefined;
    const actual = row?.version ?? 0;
    if (actual !== expected) throw new CheckpointConflictError(consumer, source, expected, actual);
  }

  const heldEffect = sql.stmt("SELECT stream, kind, payload FROM outbox WHERE id = ?");
  for (const row of c.outbox) {
    if (row.category !== "effect") continue;
    const held = heldEffect.get(row.id) as { stream: string; kind: string; payload: string } | undefined;
    const reused =
      held &&
      effectKeyReuse(
        row.id,
        { ...held, payload: JSON.parse(held.payload) },
        { ...row, payload: JSON.parse(row.payload) },
      );
    if (reused) throw reused;
  }
  return current;
}

/** The writes of a commit checked by `checkCommit` at version `current`. */
export function applyCommit(sql: Sql, c: EncodedCommit, current: number): { result: CommitResult; added: number } {
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
  let added = 0;
  const inserted: { id: string; seq: number }[] = [];
  // seq = max + 1 is safe: the write lock is held, and rows are never deleted.
  const insertOutbox = sql.stmt(
    `INSERT INTO outbox (id, seq, category, kind, stream, payload, status, attempts, not_before, lease_owner, lease_until,
       result, created_at, updated_at)
     VALUES (?, (SELECT coalesce(max(seq), 0) + 1 FROM outbox), ?, ?, ?, ?, 'pending', ?, ?, ?, ?, ?, ?, ?)
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
    ) as { seq: number } | undefined;
    if (!got) continue;
    inserted.push({ id: row.id, seq: got.seq });
    if (row.leaseOwner === null) added++;
  }
  const markDone = sql.stmt(
    `UPDATE outbox SET status = 'done', outcome = ?, result = ?, lease_owner = NULL, lease_until = NULL, updated_at = ?
     WHERE id = ? AND status <> 'done'`,
  );
  for (const done of c.outboxDone) markDone.run(done.outcome, done.result, c.now, done.id);
  if (c.inbox) {
    sql
      .stmt("INSERT INTO inbox (consumer, message_id, reply, recorded_at) VALUES (?, ?, ?, ?)")
      .run(c.inbox.consumer, c.inbox.messageId, c.inbox.reply, c.now);
  }
  if (c.checkpoint) {
    sql
      .stmt(
        `INSERT INTO checkpoints (consumer, source, version, updated_at) VALUES (?, ?, ?, ?)
         ON CONFLICT (consumer, source) DO UPDATE SET version = excluded.version, updated_at = excluded.updated_at`,
      )
      .run(c.checkpoint.consumer, c.checkpoint.source, c.checkpoint.version, c.now);
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
  return { result: { version: current + c.events.length, events: appendedRecords(c, current), inserted }, added };
}
