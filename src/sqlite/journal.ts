import { JOURNAL_DEFAULTS } from "../base/defaults.js";
import type {
  ConsumerPositions,
  DeadLetterMatch,
  DeadLetterPageQuery,
  OutboxPageQuery,
  Page,
} from "../journal/console-queries.js";
import {
  encodeCommit,
  encodeOutboxWrite,
  isOutboxWrite,
  type JournalWrite,
  type WriteAnswer,
} from "../journal/encode.js";
import { type BatchOutcome, GroupCommitter } from "../journal/group-commit.js";
import { AddedRowsCollector, OutboxSignal, type OwnsSlice, updateReleasesRow } from "../journal/outbox-signal.js";
import { claimSlices, journalSliceCount, outboxSlice } from "../journal/outbox-slice.js";
import { pruneBatchSize } from "../journal/prune.js";
import { backfilledPublishedSlice, requirePublishedSlices } from "../journal/published.js";
import { streamNames } from "../journal/sql-rows.js";
import type {
  ClaimOptions,
  Commit,
  CommitResult,
  DeadLetterFilter,
  DeadLetterRecord,
  DocumentRecord,
  EventRecord,
  ForgottenConsumer,
  InboxRecord,
  Journal,
  JournalSummary,
  NewPublished,
  OutboxCategory,
  OutboxFilter,
  OutboxRow,
  OutboxUpdate,
  ParkedRecord,
  PublishedRecord,
  SnapshotRecord,
  SnapshotTail,
  StateAnswers,
  StateReads,
  StreamVersion,
} from "../journal/types.js";
import { appendPublished } from "./append-published.js";
import { type WriteMark, writeCommit } from "./commit.js";
import * as consoleQueries from "./console-queries.js";
import * as deadLetters from "./dead-letters.js";
import * as documents from "./documents.js";
import { BetterSqlite3 } from "./driver.js";
import { mapSqliteError } from "./errors.js";
import * as inbox from "./inbox.js";
import { migrate } from "./migrations.js";
import * as outbox from "./outbox.js";
import { pruneOutbox } from "./prune-outbox.js";
import { prunePublished } from "./prune-published.js";
import { readPublished } from "./read-published.js";
import { stateReader } from "./read-state.js";
import * as sequencing from "./sequencing.js";
import { Sql } from "./sql.js";
import * as streams from "./streams.js";
import { summarize } from "./summary.js";

/**
 * An append to the published log, queued with the commits: it shares their batch's transaction
 * and fsync instead of paying one of its own per integration event.
 */
interface PublishedWrite {
  publishedWrite: true;
  entry: NewPublished;
  now: number;
}
type SqliteWrite = JournalWrite | PublishedWrite;
type SqliteAnswer = WriteAnswer | { position: number };
const isPublishedWrite = (write: SqliteWrite): write is PublishedWrite => "publishedWrite" in write;

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
  /** Slices outbox rows are spread over (see `outboxSlice`); `DEFAULT_SLICE_COUNT` when absent. */
  sliceCount?: number;
}

/**
 * The embedded journal: one SQLite file in WAL mode. The driver is synchronous, so each call
 * runs to completion on the event loop; every write is one `BEGIN IMMEDIATE` transaction, which
 * serializes writers across connections and processes on the file (waiting up to the busy timeout).
 *
 * Group commit: commits queue until the next turn of the event loop, then the whole queue is one
 * `BEGIN IMMEDIATE` transaction (one fsync) with a SAVEPOINT per commit, so a failing commit is
 * rolled back alone and the others land. If the batch's COMMIT fails, every commit of it fails
 * with that error (SQLite rolls the transaction back: nothing of the batch landed).
 *
 * `onOutbox` wakes listeners of this instance only: another process writing the same file is not
 * heard, so dispatchers elsewhere must also poll.
 */
export class SqliteJournal implements Journal {
  readonly backend = "sqlite";
  private readonly sql: Sql;
  private readonly outboxSignal = new OutboxSignal();
  private readonly publishedListeners = new Set<() => void>();
  private readonly group: GroupCommitter<SqliteWrite, SqliteAnswer>;
  private readonly claimTx: (options: ClaimOptions) => OutboxRow[];
  private readonly stateTx: (reads: StateReads) => StateAnswers;
  private closed = false;
  readonly sliceCount: number;

  constructor(readonly options: SqliteJournalOptions) {
    const db = new BetterSqlite3(options.path, {
      timeout: options.busyTimeoutMs ?? JOURNAL_DEFAULTS.sqliteBusyTimeoutMs,
    });
    db.pragma("journal_mode = WAL");
    db.pragma(`synchronous = ${options.synchronous === "NORMAL" ? "NORMAL" : "FULL"}`);
    this.sliceCount = journalSliceCount(options.sliceCount);
    // The migration that added the slice column backfills it with this (see migrations.ts).
    db.function("oncely_outbox_slice", { deterministic: true }, (category, stream, payload) =>
      outboxSlice(
        { category: category as OutboxCategory, stream: String(stream), payload: JSON.parse(String(payload)) },
        this.sliceCount,
      ),
    );
    // The migration that added the published log's slice column backfills it with this.
    db.function("oncely_published_slice", { deterministic: true }, (body, messageId) =>
      backfilledPublishedSlice(String(body), String(messageId), this.sliceCount),
    );
    this.sql = new Sql(db);
    this.group = new GroupCommitter((batch) => this.writeBatch(batch), {
      start: "next-turn",
      maxBatch: JOURNAL_DEFAULTS.sqliteMaxBatch,
    });
    const claimTx = db.transaction((claim: ClaimOptions) => outbox.claimOutbox(this.sql, claim));
    this.claimTx = (claim) => claimTx.immediate(claim);
    this.stateTx = stateReader(this.sql);
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

  /** Batch sizes seen by group commit (benchmarks, metrics). */
  get groupCommitStats() {
    return this.group.stats;
  }

  /** Called after each group-commit batch with its size and write time (see `observeJournal`). */
  onGroupCommit(listener: (size: number, seconds: number) => void): () => void {
    return this.group.onBatch(listener);
  }

  async commit(commit: Commit): Promise<CommitResult> {
    // Encode before queueing: a value JSON cannot hold fails this commit alone, with nothing written.
    return (await this.group.submit(encodeCommit(commit, this.sliceCount))) as CommitResult;
  }

  /**
   * One transaction for the batch. A commit refused before its first write (see commit.ts: a
   * version conflict, a duplicate inbox row) needs no rollback, and the batch runs without a
   * savepoint per commit. When a commit fails after a write (a checkpoint or effect-key conflict
   * after its inbox row, an event id already used, a constraint), the partial commit cannot be
   * undone alone: the whole transaction is rolled back and the batch is applied again with a
   * savepoint per commit, where that commit fails alone. Throws (failing all) when BEGIN or
   * COMMIT fails, or when an error rolled back the whole transaction (disk full, I/O).
   */
  private writeBatch(batch: SqliteWrite[]): BatchOutcome<SqliteAnswer>[] {
    const outcomes = this.applyBatch(batch, false);
    return outcomes ?? (this.applyBatch(batch, true) as BatchOutcome<SqliteAnswer>[]);
  }

  /** The batch in one transaction; undefined (rolled back) when a write failed without savepoints. */
  private applyBatch(batch: SqliteWrite[], savepoints: boolean): BatchOutcome<SqliteAnswer>[] | undefined {
    const db = this.sql.db;
    const outcomes: BatchOutcome<SqliteAnswer>[] = [];
    const added = new AddedRowsCollector();
    let published = 0;
    try {
      this.sql.stmt("BEGIN IMMEDIATE").run();
    } catch (error) {
      throw mapSqliteError(error);
    }
    try {
      for (const write of batch) {
        if (savepoints) this.sql.stmt("SAVEPOINT oncely_commit").run();
        const mark: WriteMark = { written: false };
        try {
          if (isPublishedWrite(write)) {
            mark.written = true;
            const position = appendPublished(this.sql, write.entry, write.now, this.sliceCount);
            if (savepoints) this.sql.stmt("RELEASE oncely_commit").run();
            outcomes.push({ ok: { position } });
            published++;
            continue;
          }
          if (isOutboxWrite(write)) {
            mark.written = true;
            const status = outbox.updateOutbox(this.sql, write.id, write.owner, write.update, write.now);
            if (savepoints) this.sql.stmt("RELEASE oncely_commit").run();
            outcomes.push({ ok: { status } });
            continue;
          }
          const done = writeCommit(this.sql, write, mark);
          if (savepoints) this.sql.stmt("RELEASE oncely_commit").run();
          outcomes.push({ ok: done.result });
          for (const row of done.added) added.add(row);
          if (done.published) published++;
        } catch (error) {
          // Some errors (disk full, I/O) roll back the whole transaction: then the batch fails as one.
          if (!db.inTransaction) throw error;
          if (savepoints) {
            this.sql.stmt("ROLLBACK TO oncely_commit").run();
            this.sql.stmt("RELEASE oncely_commit").run();
          } else if (mark.written) {
            // A write failed part-way: undo the batch and apply it again with savepoints.
            db.exec("ROLLBACK");
            return undefined;
          }
          outcomes.push({ error: mapSqliteError(error) });
        }
      }
      this.sql.stmt("COMMIT").run();
    } catch (error) {
      if (db.inTransaction) db.exec("ROLLBACK");
      throw mapSqliteError(error);
    }
    if (!added.empty) this.outboxSignal.wake(added);
    if (published > 0) for (const listener of this.publishedListeners) queueMicrotask(listener);
    return outcomes;
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

  /** Both reads in one synchronous call: no commit can land between them. */
  readFromSnapshot(stream: string, limit = Number.POSITIVE_INFINITY): Promise<SnapshotTail> {
    return this.run(() => {
      const snapshot = streams.latestSnapshot(this.sql, stream);
      return { snapshot, events: streams.readStream(this.sql, stream, (snapshot?.version ?? 0) + 1, limit) };
    });
  }

  listStreams(prefix: string, limit = Number.POSITIVE_INFINITY): Promise<string[]> {
    return this.run(() => streamNames(streams.listStreamVersions(this.sql, prefix, limit)));
  }

  listStreamVersions(prefix: string, limit = Number.POSITIVE_INFINITY): Promise<StreamVersion[]> {
    return this.run(() => streams.listStreamVersions(this.sql, prefix, limit));
  }

  claimOutbox(options: ClaimOptions): Promise<OutboxRow[]> {
    return this.run(() => {
      const slices = claimSlices(options, this.sliceCount);
      // An empty list claims nothing: no statement (SQLite's IN over an empty json_each would say the same).
      return slices?.length === 0 ? [] : this.claimTx(options);
    });
  }

  async updateOutbox(id: string, owner: string, update: OutboxUpdate, now: number): Promise<boolean> {
    const status = await this.writeOutbox(id, owner, update, now);
    if ((status === "pending" || status === "resolving") && updateReleasesRow(owner, update)) this.outboxSignal.wake();
    return status !== undefined;
  }

  async forceOutbox(id: string, update: OutboxUpdate, now: number): Promise<boolean> {
    const status = await this.writeOutbox(id, null, { ...update, releaseLease: true }, now);
    if (status === undefined) return false;
    this.outboxSignal.wake();
    return true;
  }

  /** A lease-held (or, without owner, forced) outbox update, written in the next group-commit batch. */
  private async writeOutbox(id: string, owner: string | null, update: OutboxUpdate, now: number) {
    const answer = await this.group.submit(encodeOutboxWrite(id, owner, update, now));
    return (answer as { status: string | undefined }).status;
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

  readState(reads: StateReads): Promise<StateAnswers> {
    return this.run(() => this.stateTx(reads));
  }

  getCheckpoint(consumer: string, source: string): Promise<number> {
    return this.run(() => sequencing.getCheckpoint(this.sql, consumer, source));
  }

  listParked(consumer: string, source?: string): Promise<ParkedRecord[]> {
    return this.run(() => sequencing.listParked(this.sql, consumer, source));
  }

  forgetConsumer(consumer: string, options: { keepReader?: boolean } = {}): Promise<ForgottenConsumer> {
    const forget = this.sql.db.transaction(() => sequencing.forgetConsumer(this.sql, consumer, !!options.keepReader));
    return this.run(() => forget.immediate());
  }

  getParked(consumer: string, source: string, version: number): Promise<ParkedRecord | undefined> {
    return this.run(() => sequencing.getParked(this.sql, consumer, source, version));
  }

  summarize(): Promise<JournalSummary> {
    return this.run(() => summarize(this.sql));
  }

  listDeadLetters(filter: DeadLetterFilter = {}): Promise<DeadLetterRecord[]> {
    return this.run(() => deadLetters.listDeadLetters(this.sql, filter));
  }

  pageOutbox(query: OutboxPageQuery): Promise<Page<OutboxRow>> {
    return this.run(() => consoleQueries.pageOutbox(this.sql, query));
  }

  pageDeadLetters(query: DeadLetterPageQuery): Promise<Page<DeadLetterRecord>> {
    return this.run(() => consoleQueries.pageDeadLetters(this.sql, query));
  }

  countDeadLetters(filter: DeadLetterMatch): Promise<number> {
    return this.run(() => consoleQueries.countDeadLetters(this.sql, filter));
  }

  consumerPositions(): Promise<ConsumerPositions> {
    return this.run(() => consoleQueries.consumerPositions(this.sql));
  }

  getDeadLetter(id: string): Promise<DeadLetterRecord | undefined> {
    return this.run(() => deadLetters.getDeadLetter(this.sql, id));
  }

  resolveDeadLetter(id: string, status: "replayed" | "discarded", now: number): Promise<boolean> {
    return this.run(() => deadLetters.resolveDeadLetter(this.sql, id, status, now));
  }

  /**
   * In the next group-commit batch: resolves once that batch is committed (durable as a commit
   * is). Positions follow the batch order, and the batch becomes visible at once, so readers still
   * see positions in position order.
   */
  async appendPublished(entry: NewPublished, now: number): Promise<number> {
    const answer = await this.group.submit({ publishedWrite: true, entry, now });
    return (answer as { position: number }).position;
  }

  async readPublished(after: number, limit?: number, slices?: readonly number[]): Promise<PublishedRecord[]> {
    if (slices !== undefined) requirePublishedSlices(slices, this.sliceCount);
    return this.run(() => readPublished(this.sql, after, limit, slices));
  }

  prunePublished(before: number, limit?: number): Promise<number> {
    return this.run(() => prunePublished(this.sql, before, pruneBatchSize(limit)));
  }

  /** Appends through this instance only: readers in other processes on the file must poll. */
  onPublished(listener: () => void): () => void {
    this.publishedListeners.add(listener);
    return () => this.publishedListeners.delete(listener);
  }

  getDocument(collection: string, id: string): Promise<DocumentRecord | undefined> {
    return this.run(() => documents.getDocument(this.sql, collection, id));
  }

  listDocuments(collection: string, limit = Number.POSITIVE_INFINITY): Promise<DocumentRecord[]> {
    return this.run(() => documents.listDocuments(this.sql, collection, limit));
  }

  onOutbox(listener: () => void, categories?: readonly OutboxCategory[], owns?: OwnsSlice): () => void {
    return this.outboxSignal.add(listener, categories, owns);
  }

  async close(): Promise<void> {
    this.outboxSignal.clear();
    this.publishedListeners.clear();
    if (this.closed) return;
    this.closed = true;
    this.sql.db.close();
  }
}
