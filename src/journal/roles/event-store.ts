import type { ConsumerStateWrites } from "./consumer-state.js";
import type { DeadLetterWrites } from "./dead-letters.js";
import type { DocumentWrites } from "./documents.js";
import type { InboxWrite } from "./inbox.js";
import type { OutboxWrites } from "./outbox-store.js";
import type { PublishedWrites } from "./published-log.js";

/** An event as it is appended. `eventId` is a stable id chosen by the caller. */
export interface NewEvent {
  eventId: string;
  type: string;
  data: unknown;
  causationId?: string | undefined;
  correlationId?: string | undefined;
  /** Version of the event's payload schema (default 1). */
  schemaVersion?: number | undefined;
}

/** An event as it is stored. */
export interface EventRecord {
  eventId: string;
  stream: string;
  /** 1-based position in its stream. */
  version: number;
  type: string;
  data: unknown;
  causationId: string | null;
  correlationId: string | null;
  /** Epoch ms, from the committing caller's clock. */
  recordedAt: number;
  schemaVersion: number;
}

export interface SnapshotRecord {
  stream: string;
  /** The stream version the state reflects. */
  version: number;
  /** Version of the state's shape; a snapshot with another version is ignored by recovery. */
  schemaVersion: number;
  state: unknown;
  takenAt: number;
}

/** A stream and its current version (`listStreamVersions`). */
export interface StreamVersion {
  stream: string;
  version: number;
}

/** The stream's part of a commit (see `Commit`). */
export interface StreamWrites {
  stream?: string | undefined;
  expectedVersion?: number | undefined;
  events?: NewEvent[] | undefined;
  snapshot?: { version: number; schemaVersion: number; state: unknown } | undefined;
}

/**
 * One atomic unit of work. Either everything in it is durable or nothing is.
 *
 * - `events` are appended to `stream` only if its current version equals `expectedVersion`,
 *   else the commit fails with `VersionConflictError` and nothing is written.
 * - `outbox` rows are inserted if absent (same id twice is a no-op, never an error).
 * - `inbox` is inserted; if (consumer, messageId) exists the commit fails with
 *   `DuplicateMessageError` and nothing is written. With `inbox.outcomeOf`, the message's record
 *   may instead be an outbox row's done transition (see `InboxEntry`).
 * - `outboxDone` marks rows done with their outcome (a row already done keeps its first outcome).
 * - `checkpoint` sets (consumer, source) to `version`; when `expected` is given, the stored
 *   version must equal it (0 when absent) or the commit fails with `CheckpointConflictError`.
 *   `checkpoints` does the same for several at once (a sequenced projection advances its source
 *   stream and guards the document's revision in one commit); each is checked before anything is
 *   written, and one (consumer, source) may appear once in a commit.
 * - `published` entries are appended to the published log (see `PublishedWrites`).
 */
export interface Commit
  extends StreamWrites,
    OutboxWrites,
    PublishedWrites,
    InboxWrite,
    ConsumerStateWrites,
    DeadLetterWrites,
    DocumentWrites {
  /** The committing caller's time (epoch ms); stored as recordedAt / createdAt / updatedAt. */
  now: number;
}

export interface CommitResult {
  /** Stream version after the commit (the expected version when no events were appended). */
  version: number;
  events: EventRecord[];
  /** The outbox rows this commit inserted (a row whose id existed is absent), with their seq. */
  inserted?: { id: string; seq: number }[] | undefined;
}

/** A stream's latest snapshot and the events after it (`EventReader.readFromSnapshot`). */
export interface SnapshotTail {
  snapshot: SnapshotRecord | undefined;
  /** In version order, from the snapshot's version + 1 (from 1 without a snapshot). */
  events: EventRecord[];
}

/** Streams as they are read: events, versions, snapshots, names by prefix. */
export interface EventReader {
  /** Events of `stream` with version >= fromVersion (default 1), in version order. */
  readStream(stream: string, fromVersion?: number, limit?: number): Promise<EventRecord[]>;
  /** Current version of a stream (0 when empty). */
  streamVersion(stream: string): Promise<number>;
  latestSnapshot(stream: string): Promise<SnapshotRecord | undefined>;
  /**
   * The latest snapshot of `stream` and its events after the snapshot's version (every event when
   * there is none), at most `limit` of them, in ONE read: what an actor waking up needs, for one
   * round trip where `latestSnapshot` then `readStream` cost two.
   */
  readFromSnapshot(stream: string, limit?: number): Promise<SnapshotTail>;
  /** Names of streams starting with a prefix (e.g. `order/`), sorted. */
  listStreams(prefix: string, limit?: number): Promise<string[]>;
  /**
   * The same streams with their current versions, in one read: a reader that keeps what it derived
   * from each stream's state (a status, a summary) reads again only the streams whose version moved,
   * whoever appended to them (another process too).
   */
  listStreamVersions(prefix: string, limit?: number): Promise<StreamVersion[]>;
}

/**
 * Streams of events and their snapshots, and the commit: the one write of the journal. A commit
 * appends to one stream and, in the same transaction, writes every other role's part (outbox rows,
 * the inbox record, checkpoints, parked messages, dead letters, documents), so its parts are
 * declared beside the role they write. Read by the runtime (recovery), views and the CLI.
 */
export interface EventStore extends EventReader {
  commit(commit: Commit): Promise<CommitResult>;
}
