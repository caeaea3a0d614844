import { restoreDeadLetter } from "../journal/storable.js";
import type {
  DeadLetterRecord,
  DocumentRecord,
  EventRecord,
  InboxRecord,
  OutboxRow,
  ParkedRecord,
  SnapshotRecord,
} from "../journal/types.js";

/** Decoders from SQLite rows (snake_case columns, JSON as text) to journal records. */

// biome-ignore lint/suspicious/noExplicitAny: rows come untyped from the driver
type Row = any;

export const eventRecord = (r: Row): EventRecord => ({
  eventId: r.event_id,
  stream: r.stream,
  version: r.version,
  type: r.type,
  data: JSON.parse(r.data),
  causationId: r.causation_id,
  correlationId: r.correlation_id,
  recordedAt: r.recorded_at,
  schemaVersion: r.schema_version,
});

export const snapshotRecord = (r: Row): SnapshotRecord => ({
  stream: r.stream,
  version: r.version,
  schemaVersion: r.schema_version,
  state: JSON.parse(r.state),
  takenAt: r.taken_at,
});

export const outboxRow = (r: Row): OutboxRow => ({
  id: r.id,
  category: r.category,
  kind: r.kind,
  stream: r.stream,
  payload: JSON.parse(r.payload),
  notBefore: r.not_before,
  status: r.status,
  attempts: r.attempts,
  leaseOwner: r.lease_owner,
  leaseUntil: r.lease_until,
  lastError: r.last_error,
  outcome: r.outcome,
  result: JSON.parse(r.result),
  createdAt: r.created_at,
  updatedAt: r.updated_at,
  seq: r.seq,
});

export const inboxRecord = (r: Row): InboxRecord => ({
  consumer: r.consumer,
  messageId: r.message_id,
  reply: JSON.parse(r.reply),
  recordedAt: r.recorded_at,
});

export const parkedRecord = (r: Row): ParkedRecord => ({
  consumer: r.consumer,
  source: r.source,
  version: r.version,
  message: JSON.parse(r.message),
  parkedAt: r.parked_at,
});

/** Escaped fields come back as they were committed (see `src/journal/storable.ts`). */
export const deadLetterRecord = (r: Row): DeadLetterRecord =>
  restoreDeadLetter({
    id: r.id,
    consumer: r.consumer,
    messageId: r.message_id,
    payload: JSON.parse(r.payload),
    error: r.error,
    stack: r.stack,
    attempts: r.attempts,
    firstFailedAt: r.first_failed_at,
    lastFailedAt: r.last_failed_at,
    status: r.status,
    resolvedAt: r.resolved_at,
  });

export const documentRecord = (r: Row): DocumentRecord => ({
  collection: r.collection,
  id: r.id,
  doc: JSON.parse(r.doc),
  updatedAt: r.updated_at,
});
