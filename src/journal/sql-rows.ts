import { restoreDeadLetter } from "./storable.js";
import type {
  DeadLetterRecord,
  DocumentRecord,
  EventRecord,
  InboxRecord,
  OutboxRow,
  ParkedRecord,
  PublishedRecord,
  SnapshotRecord,
  StreamVersion,
} from "./types.js";

/**
 * Decoders from a SQL back end's rows (snake_case columns, JSON selected as text) to journal
 * records, shared by SQLite and PostgreSQL. Numbers go through Number: PostgreSQL's driver
 * returns bigint columns (epoch ms) as strings, SQLite's returns numbers already.
 */

// biome-ignore lint/suspicious/noExplicitAny: rows come untyped from the driver
type Row = any;

const num = (v: unknown): number => Number(v);
const numOrNull = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));

export const eventRecord = (r: Row): EventRecord => ({
  eventId: r.event_id,
  stream: r.stream,
  version: num(r.version),
  type: r.type,
  data: JSON.parse(r.data),
  causationId: r.causation_id,
  correlationId: r.correlation_id,
  recordedAt: num(r.recorded_at),
  schemaVersion: num(r.schema_version),
});

export const streamVersionRecord = (r: Row): StreamVersion => ({ stream: r.stream, version: num(r.version) });

/** `listStreams` answered from `listStreamVersions`: one read serves both. */
export const streamNames = (list: StreamVersion[]): string[] => list.map((s) => s.stream);

export const snapshotRecord = (r: Row): SnapshotRecord => ({
  stream: r.stream,
  version: num(r.version),
  schemaVersion: num(r.schema_version),
  state: JSON.parse(r.state),
  takenAt: num(r.taken_at),
});

export const outboxRow = (r: Row): OutboxRow => ({
  id: r.id,
  category: r.category,
  kind: r.kind,
  stream: r.stream,
  payload: JSON.parse(r.payload),
  notBefore: num(r.not_before),
  status: r.status,
  attempts: num(r.attempts),
  leaseOwner: r.lease_owner,
  leaseUntil: numOrNull(r.lease_until),
  lastError: r.last_error,
  outcome: r.outcome,
  result: JSON.parse(r.result),
  createdAt: num(r.created_at),
  updatedAt: num(r.updated_at),
  seq: num(r.seq),
});

export const inboxRecord = (r: Row): InboxRecord => ({
  consumer: r.consumer,
  messageId: r.message_id,
  reply: JSON.parse(r.reply),
  recordedAt: num(r.recorded_at),
});

export const parkedRecord = (r: Row): ParkedRecord => ({
  consumer: r.consumer,
  source: r.source,
  version: num(r.version),
  message: JSON.parse(r.message),
  parkedAt: num(r.parked_at),
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
    attempts: num(r.attempts),
    firstFailedAt: num(r.first_failed_at),
    lastFailedAt: num(r.last_failed_at),
    status: r.status,
    resolvedAt: numOrNull(r.resolved_at),
  });

export const documentRecord = (r: Row): DocumentRecord => ({
  collection: r.collection,
  id: r.id,
  doc: JSON.parse(r.doc),
  updatedAt: num(r.updated_at),
});

export const publishedRecord = (r: Row): PublishedRecord => ({
  position: num(r.position),
  messageId: r.message_id,
  subject: r.subject,
  body: r.body,
  publishedAt: num(r.published_at),
  slice: num(r.slice),
});
