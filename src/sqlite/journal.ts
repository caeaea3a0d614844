import { encodeCommit } from "../journal/encode.js";
import { pruneBatchSize } from "../journal/prune.js";
import type {
  ClaimOptions,
  Commit,
  CommitResult,
  DeadLetterFilter,
  DeadLetterRecord,
  DocumentRecord,
  EventRecord,
  InboxRecord,
  Journal,
  OutboxFilter,
  OutboxRow,
  OutboxUpdate,
  ParkedRecord,
  SnapshotRecord,
} from "../journal/types.js";
import { commitTransaction } from "./commit.js";
import * as deadLetters from "./dead-letters.js";
import * as documents from "./documents.js";
import { BetterSqlite3 } from "./driver.js";
import { mapSqliteError } from "./errors.js";
import * as inbox from "./inbox.js";
import { migrate } from "./migrations.js";
import * as outbox from "./outbox.js";
import { pruneOutbox } from "./prune-outbox.js";
import * as sequencing from "./sequencing.js";
import { Sql } from "./sql.js";
import * as streams from "./streams.js";

export interface SqliteJournalOptions {
  /** Database file; created when absent. */
  path: string;
  /**
   * FULL (default): a commit is on disk when `commit` resolves, even if the machine loses power.
   * NORMAL: in WAL mode a power loss may drop the last commits (a process crash never does).
   */
  synchronous?: "FULL" | "NORMAL";
  /** How long a write waits for another connection's lock before failing with a retryable error (default 5000). */
  busyTimeoutMs?: number;
}

/**
 * The embedded journal: one SQLite file in WAL mode. The driver is synchronous, so each call
 * runs to completion on the event loop; every write is one `BEGIN IMMEDIATE` transaction, which
 * serializes writers across connections and processes on the file (waiting up to the busy timeout).
 *
 * `onOutbox` wakes listeners of this instance only: another process writing the same file is not
 * heard, so dispatchers elsewhere must also poll.
 */
export class SqliteJournal implements Journal {
  readonly backend = "sqlite";
  private readonly sql: Sql;
  private readonly listeners = new Set<() => void>();
  private readonly commitTx: (encoded: ReturnType<typeof encodeCommit>) => ReturnType<typeof commitTransaction>;
  private readonly claimTx: (options: ClaimOptions) => OutboxRow[];
  private closed = false;

  constructor(readonly options: SqliteJournalOptions) {
    const db = new BetterSqlite3(options.path, { timeout: options.busyTimeoutMs ?? 5000 });
    db.pragma("journal_mode = WAL");
    db.pragma(`synchronous = ${options.synchronous === "NORMAL" ? "NORMAL" : "FULL"}`);
    this.sql = new Sql(db);
    const commitTx = db.transaction((encoded: ReturnType<typeof encodeCommit>) => commitTransaction(this.sql, encoded));
    this.commitTx = (encoded) => commitTx.immediate(encoded);
    const claimTx = db.transaction((claim: ClaimOptions) => outbox.claimOutbox(this.sql, claim));
    this.claimTx = (claim) => claimTx.immediate(claim);
  }

  private run<T>(work: () => T): Promise<T> {
    try {
      return Promise.resolve(work());
    } catch (error) {
      return Promise.reject(mapSqliteError(error));
    }
  }

  migrate(): Promise<void> {
    return this.run(() => migrate(this.sql));
  }

  async commit(commit: Commit): Promise<CommitResult> {
    // Encode before the transaction: a value JSON cannot hold fails the commit with nothing written.
    const encoded = encodeCommit(commit);
    const { result, added } = await this.run(() => this.commitTx(encoded));
    if (added > 0) this.notify();
    return result;
  }

  readStream(stream: string, fromVersion = 1, limit = Number.POSITIVE_INFINITY): Promise<EventRecord[]> {
    return this.run(() => streams.readStream(this.sql, stream, fromVersion, limit));
  }

  streamVersion(stream: string): Promise<number> {
    return this.run(() => streams.streamVersion(this.sql, stream));
  }

  latestSnapshot(stream: string): Promise<SnapshotRecord | undefined> {
    return this.run(() => streams.latestSnapshot(this.sql, stream));
  }

  listStreams(prefix: string, limit = Number.POSITIVE_INFINITY): Promise<string[]> {
    return this.run(() => streams.listStreams(this.sql, prefix, limit));
  }

  claimOutbox(options: ClaimOptions): Promise<OutboxRow[]> {
    return this.run(() => this.claimTx(options));
  }

  async updateOutbox(id: string, owner: string, update: OutboxUpdate, now: number): Promise<boolean> {
    const status = await this.run(() => outbox.updateOutbox(this.sql, id, owner, update, now));
    if (status === "pending" || status === "resolving") this.notify();
    return status !== undefined;
  }

  async forceOutbox(id: string, update: OutboxUpdate, now: number): Promise<boolean> {
    const status = await this.run(() =>
      outbox.updateOutbox(this.sql, id, null, { ...update, releaseLease: true }, now),
    );
    if (status === undefined) return false;
    this.notify();
    return true;
  }

  getOutbox(id: string): Promise<OutboxRow | undefined> {
    return this.run(() => outbox.getOutbox(this.sql, id));
  }

  listOutbox(filter: OutboxFilter = {}): Promise<OutboxRow[]> {
    return this.run(() => outbox.listOutbox(this.sql, filter));
  }

  async pruneOutbox(before: number, limit?: number): Promise<number> {
    const batch = pruneBatchSize(limit);
    return this.run(() => pruneOutbox(this.sql, before, batch));
  }

  getInbox(consumer: string, messageId: string): Promise<InboxRecord | undefined> {
    return this.run(() => inbox.getInbox(this.sql, consumer, messageId));
  }

  pruneInbox(before: number): Promise<number> {
    return this.run(() => inbox.pruneInbox(this.sql, before));
  }

  getCheckpoint(consumer: string, source: string): Promise<number> {
    return this.run(() => sequencing.getCheckpoint(this.sql, consumer, source));
  }

  listParked(consumer: string, source?: string): Promise<ParkedRecord[]> {
    return this.run(() => sequencing.listParked(this.sql, consumer, source));
  }

  listDeadLetters(filter: DeadLetterFilter = {}): Promise<DeadLetterRecord[]> {
    return this.run(() => deadLetters.listDeadLetters(this.sql, filter));
  }

  getDeadLetter(id: string): Promise<DeadLetterRecord | undefined> {
    return this.run(() => deadLetters.getDeadLetter(this.sql, id));
  }

  resolveDeadLetter(id: string, status: "replayed" | "discarded", now: number): Promise<boolean> {
    return this.run(() => deadLetters.resolveDeadLetter(this.sql, id, status, now));
  }

  getDocument(collection: string, id: string): Promise<DocumentRecord | undefined> {
    return this.run(() => documents.getDocument(this.sql, collection, id));
  }

  listDocuments(collection: string, limit = Number.POSITIVE_INFINITY): Promise<DocumentRecord[]> {
    return this.run(() => documents.listDocuments(this.sql, collection, limit));
  }

  onOutbox(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private notify(): void {
    for (const listener of this.listeners) queueMicrotask(listener);
  }

  async close(): Promise<void> {
    this.listeners.clear();
    if (this.closed) return;
    this.closed = true;
    this.sql.db.close();
  }
}
