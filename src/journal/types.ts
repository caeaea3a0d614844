/**
 * The journal: the one store behind oncely. Streams of events, snapshots, outbox, inbox,
 * checkpoints, parked messages, dead letters, read-model documents and the published log of
 * integration events (the journal transport's).
 *
 * Every back end (in-memory, SQLite, PostgreSQL) implements this interface and passes
 * `journalConformance` in `src/journal/conformance.ts`. The core reaches a journal only through
 * this interface (plus the back-end-neutral helpers `rows.ts` and `outcome-record.ts`), never a
 * back end.
 *
 * Times are epoch milliseconds taken from the injected clock by the caller: the journal never
 * reads a clock of its own, so simulation stays deterministic.
 */

// A type-only import: the console's queries are a role of the journal, declared in their own file.
import type { ConsoleQueries } from "./console-queries.js";

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

/** What an outbox row stands for. */
export type OutboxCategory = "effect" | "message" | "event";

/**
 * pending: to be delivered (at or after `notBefore`).
 * resolving: the outcome is Unknown; the resolver asks the provider by key.
 * reconcile: still Unknown after its budget; waits for an operator.
 * done: finished; `outcome` says how.
 * dead: a message or event that could not be delivered after its retries.
 */
export type OutboxStatus = "pending" | "resolving" | "reconcile" | "done" | "dead";

export interface NewOutboxRow {
  /** Stable key: the effect's idempotency key, a message's delivery id, an integration event's id. */
  id: string;
  category: OutboxCategory;
  /** Effect kind (`payment`), target actor type for messages, or event type / subject for events. */
  kind: string;
  /** The stream (actor) that owns the row and receives its outcome. */
  stream: string;
  payload: unknown;
  /** Earliest time to deliver (epoch ms); a durable timer when in the future. */
  notBefore: number;
  /**
   * Insert the row already leased (hand-over at commit): the committing process runs it itself,
   * with no claim. `owner` is a fresh fencing token for this row; others take it after `until`.
   * `attempts` and `result`, when given, are stored as the lease holder's first write would
   * leave them (a dispatcher recording its first attempt in the intent's own commit).
   */
  lease?: { owner: string; until: number; attempts?: number; result?: unknown } | undefined;
}

export interface OutboxRow extends NewOutboxRow {
  status: OutboxStatus;
  attempts: number;
  leaseOwner: string | null;
  leaseUntil: number | null;
  lastError: string | null;
  /** Set when done: how it ended (`completed`, `failed`, `delivered`, `published`, `settled`...). */
  outcome: string | null;
  result: unknown;
  createdAt: number;
  updatedAt: number;
  /** Insertion order, monotonic; per stream it follows commit order. */
  seq: number;
}

export interface OutboxDone {
  id: string;
  outcome: string;
  result?: unknown;
}

/** The dedup record a commit writes for the message it handles. */
export interface InboxEntry {
  /** Who received: an actor's stream name, or a consumer's name. */
  consumer: string;
  messageId: string;
  reply: unknown;
  /**
   * The message is the final outcome of this outbox row, which the commit lists in `outboxDone`.
   * While `consumer` holds the row (it is the row's stream, and the row is an effect or a message,
   * not an event) the row's done transition is the message's record and no inbox row is written:
   * a row not done yet is marked done by this commit; a row already done fails the commit with
   * `DuplicateMessageError`, nothing written. A row not held (pruned, or never there) takes the
   * inbox row as without `outcomeOf`. Only with a null reply: a done row keeps none.
   *
   * Why: every step of an effect commits its outcome, and the row's done transition is written
   * anyway; the inbox row beside it was a second record of the same fact (a heap row and two index
   * entries per step on PostgreSQL). The row lives at least as long as the inbox row would (outbox
   * retention may not be shorter than the redelivery window), so the dedup window is unchanged.
   */
  outcomeOf?: string | undefined;
}

export interface InboxRecord {
  /** Who received: an actor's stream name, or a consumer's name. */
  consumer: string;
  messageId: string;
  reply: unknown;
  recordedAt: number;
}

export interface CheckpointRecord {
  consumer: string;
  /** A source stream (`aggregateId` of the producer). */
  source: string;
  version: number;
  updatedAt: number;
}

export interface ParkedRecord {
  consumer: string;
  source: string;
  version: number;
  message: unknown;
  parkedAt: number;
}

export interface NewDeadLetter {
  id: string;
  consumer: string;
  messageId: string | null;
  payload: unknown;
  error: string;
  stack: string | null;
  attempts: number;
  firstFailedAt: number;
  lastFailedAt: number;
}

export interface DeadLetterRecord extends NewDeadLetter {
  status: "open" | "replayed" | "discarded";
  resolvedAt: number | null;
}

/**
 * An integration event in the journal's published log (the journal transport's log). Positions
 * grow in commit order: an entry never becomes visible after one with a higher position did.
 * They may skip numbers (an append of a known message id can burn one), so readers never count.
 */
export interface PublishedRecord {
  position: number;
  /** The broker dedup id (`brokerMessageId(envelope)`); unique in the log. */
  messageId: string;
  subject: string;
  /** The encoded envelope, as a transport delivers it. */
  body: string;
  publishedAt: number;
}

export interface NewPublished {
  messageId: string;
  subject: string;
  body: string;
}

/** What `forgetConsumer` deleted. */
export interface ForgottenConsumer {
  inbox: number;
  checkpoints: number;
  parked: number;
}

export interface DocumentRecord {
  collection: string;
  id: string;
  doc: unknown;
  updatedAt: number;
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
 */
export interface Commit {
  stream?: string | undefined;
  expectedVersion?: number | undefined;
  events?: NewEvent[] | undefined;
  snapshot?: { version: number; schemaVersion: number; state: unknown } | undefined;
  outbox?: NewOutboxRow[] | undefined;
  outboxDone?: OutboxDone[] | undefined;
  inbox?: InboxEntry | undefined;
  checkpoint?: CheckpointWrite | undefined;
  checkpoints?: CheckpointWrite[] | undefined;
  park?: Omit<ParkedRecord, "parkedAt">[] | undefined;
  unpark?: { consumer: string; source: string; version: number }[] | undefined;
  deadLetters?: NewDeadLetter[] | undefined;
  /** Upsert (doc) or delete (null) read-model documents. */
  documents?: { collection: string; id: string; doc: unknown | null }[] | undefined;
  /** The committing caller's time (epoch ms); stored as recordedAt / createdAt / updatedAt. */
  now: number;
}

/** A checkpoint set by a commit; with `expected`, a guard that refuses the commit unless it holds. */
export interface CheckpointWrite {
  consumer: string;
  source: string;
  version: number;
  expected?: number | undefined;
}

export interface CommitResult {
  /** Stream version after the commit (the expected version when no events were appended). */
  version: number;
  events: EventRecord[];
  /** The outbox rows this commit inserted (a row whose id existed is absent), with their seq. */
  inserted?: { id: string; seq: number }[] | undefined;
}

export interface ClaimOptions {
  /** Lease owner id (one per dispatcher). */
  owner: string;
  now: number;
  leaseMs: number;
  limit: number;
  /** Rows in these statuses are candidates (default `["pending"]`). */
  statuses?: OutboxStatus[];
  categories?: OutboxCategory[];
  /**
   * Only claim a row when no earlier (lower seq) row of the same stream and category is still
   * pending/leased: delivery per stream then follows commit order (used by the event relay).
   */
  inStreamOrder?: boolean;
}

/** Fields a dispatcher may change on a row it holds the lease of. */
export interface OutboxUpdate {
  status?: OutboxStatus;
  attempts?: number;
  notBefore?: number;
  lastError?: string | null;
  outcome?: string | null;
  result?: unknown;
  /** Release the lease (default true). */
  releaseLease?: boolean;
}

export interface OutboxFilter {
  status?: OutboxStatus | OutboxStatus[];
  category?: OutboxCategory;
  kind?: string;
  stream?: string;
  limit?: number;
}

export interface DeadLetterFilter {
  consumer?: string;
  status?: DeadLetterRecord["status"];
  limit?: number;
}

/**
 * What is waiting in the journal, counted per group, for metrics collected on scrape. Done outbox
 * rows and resolved dead letters are left out: they only grow (counters say how many finished), and
 * leaving them out keeps each query on the rows still open.
 */
export interface JournalSummary {
  /** Outbox rows not done, per category, kind and status, sorted by those three. */
  outbox: { category: OutboxCategory; kind: string; status: OutboxStatus; count: number; oldestCreatedAt: number }[];
  /** Parked messages per consumer, sorted by consumer. */
  parked: { consumer: string; count: number; oldestParkedAt: number }[];
  /** Open dead letters per consumer, sorted by consumer. */
  deadLetters: { consumer: string; count: number; oldestFailedAt: number }[];
}

export interface Journal extends ConsoleQueries {
  /** Back-end name for messages and reports: `memory`, `sqlite`, `postgres`. */
  readonly backend: string;
  /** Create or upgrade the schema. Idempotent and versioned; safe to call from several processes. */
  migrate(): Promise<void>;
  commit(commit: Commit): Promise<CommitResult>;
  /** Events of `stream` with version >= fromVersion (default 1), in version order. */
  readStream(stream: string, fromVersion?: number, limit?: number): Promise<EventRecord[]>;
  /** Current version of a stream (0 when empty). */
  streamVersion(stream: string): Promise<number>;
  latestSnapshot(stream: string): Promise<SnapshotRecord | undefined>;
  /** Names of streams starting with a prefix (e.g. `order/`), sorted. */
  listStreams(prefix: string, limit?: number): Promise<string[]>;
  /**
   * The same streams with their current versions, in one read: a reader that keeps what it derived
   * from each stream's state (a status, a summary) reads again only the streams whose version moved,
   * whoever appended to them (another process too).
   */
  listStreamVersions(prefix: string, limit?: number): Promise<StreamVersion[]>;

  /** Claim due rows with a lease: rows whose lease is absent or expired and notBefore <= now. */
  claimOutbox(options: ClaimOptions): Promise<OutboxRow[]>;
  /** Update a row only while `owner` holds its lease. Returns false when the lease was lost. */
  updateOutbox(id: string, owner: string, update: OutboxUpdate, now: number): Promise<boolean>;
  /** Operator or resolver change without a lease (e.g. settle from reconciliation). */
  forceOutbox(id: string, update: OutboxUpdate, now: number): Promise<boolean>;
  getOutbox(id: string): Promise<OutboxRow | undefined>;
  listOutbox(filter?: OutboxFilter): Promise<OutboxRow[]>;
  /**
   * Delete at most `limit` (default 1,000) `done` rows whose `updatedAt` is strictly before
   * `before`; returns how many. Rows in any other status are never deleted, whatever their age.
   * One short statement per call: call again until it returns less than `limit`.
   * A pruned key is forgotten: a commit that inserts it again creates a new pending row (see
   * `OutboxRetention` for the rule that keeps this from running an effect twice).
   */
  pruneOutbox(before: number, limit?: number): Promise<number>;

  getInbox(consumer: string, messageId: string): Promise<InboxRecord | undefined>;
  /** Delete inbox rows recorded strictly before `before`. Returns how many. */
  pruneInbox(before: number): Promise<number>;

  getCheckpoint(consumer: string, source: string): Promise<number>;
  listParked(consumer: string, source?: string): Promise<ParkedRecord[]>;
  /**
   * Forget what a consumer has handled: its inbox rows, checkpoints and parked messages, in one
   * transaction (dead letters stay, for the record). With `keepReader`, its position in the
   * published log (the checkpoint under `PUBLISHED_READER_SOURCE`) stays. Used by a projection's
   * rebuild (which then consumes everything again under that name) and to retire a consumer, so
   * that it no longer holds back the published log's retention.
   */
  forgetConsumer(consumer: string, options?: { keepReader?: boolean }): Promise<ForgottenConsumer>;
  /** The message parked at one version of a source, if any: a point read, however many are parked. */
  getParked(consumer: string, source: string, version: number): Promise<ParkedRecord | undefined>;

  listDeadLetters(filter?: DeadLetterFilter): Promise<DeadLetterRecord[]>;
  getDeadLetter(id: string): Promise<DeadLetterRecord | undefined>;
  /** Mark a dead letter replayed or discarded. */
  resolveDeadLetter(id: string, status: "replayed" | "discarded", now: number): Promise<boolean>;

  /**
   * Append an integration event to the published log; returns its position. A message id already
   * in the log is stored once: its existing position is returned and nothing is written.
   */
  appendPublished(entry: NewPublished, now: number): Promise<number>;
  /** Entries with position > `after`, in position order, at most `limit` (default all). */
  readPublished(after: number, limit?: number): Promise<PublishedRecord[]>;
  /**
   * Delete at most `limit` (default 1,000) entries published strictly before `before` that every
   * registered reader has passed: a reader is a checkpoint under source `PUBLISHED_READER_SOURCE`
   * (`src/journal/published.ts`), and its version is its position. No reader: nothing is deleted.
   */
  prunePublished(before: number, limit?: number): Promise<number>;
  /**
   * Wake-up signal after an append to the published log (in-process for memory/SQLite,
   * LISTEN/NOTIFY for PostgreSQL). Returns an unsubscribe function.
   */
  onPublished(listener: () => void): () => void;

  /** Counts of what is still open (see `JournalSummary`): one grouped read per table. */
  summarize(): Promise<JournalSummary>;

  getDocument(collection: string, id: string): Promise<DocumentRecord | undefined>;
  listDocuments(collection: string, limit?: number): Promise<DocumentRecord[]>;

  /**
   * Wake-up signal: called after commits that added outbox rows due now and not handed over at
   * commit (a row due later, such as a durable timer, is found by the claimer's poll), and after
   * updates that made a row claimable again (in-process for memory/SQLite, LISTEN/NOTIFY for
   * PostgreSQL so other processes wake too). With `categories`, only when rows of one of them were
   * added, or when what changed is not known (another process's NOTIFY, an update, a reconnect):
   * a wake-up means "look at the outbox", never a count. Returns an unsubscribe function.
   */
  onOutbox(listener: () => void, categories?: readonly OutboxCategory[]): () => void;
  close(): Promise<void>;
}
