import type pg from "pg";
import { GROUP_COMMIT_DEFAULTS, JOURNAL_DEFAULTS } from "../base/defaults.js";
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
  writeKeys,
} from "../journal/encode.js";
import {
  type BatchOutcome,
  type GroupCommitOptions,
  GroupCommitter,
  wholeOrEachAlone,
} from "../journal/group-commit.js";
import {
  AddedRowsCollector,
  OutboxSignal,
  type OwnsSlice,
  parseWakePayload,
  updateReleasesRow,
  wakesAtCommit,
} from "../journal/outbox-signal.js";
import { claimSlices, journalSliceCount } from "../journal/outbox-slice.js";
import { pruneBatchSize } from "../journal/prune.js";
import { requirePublishedSlices } from "../journal/published.js";
import { outboxRow, parkedRecord, snapshotRecord, streamNames } from "../journal/sql-rows.js";
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
import { appendPublished, appendPublishedBatch, type PublishedAppend } from "./append-published.js";
import { OUTBOX_COLUMNS, PARKED_COLUMNS, SNAPSHOT_COLUMNS } from "./columns.js";
import { commitBatch } from "./commit-batch.js";
import * as consoleQueries from "./console-queries.js";
import * as deadLetters from "./dead-letters.js";
import * as documents from "./documents.js";
import { Pg } from "./driver.js";
import { isConnectionError, mapPgError } from "./errors.js";
import { forgetConsumer } from "./forget-consumer.js";
import * as inbox from "./inbox.js";
import { OutboxListener } from "./listener.js";
import { migrate } from "./migrations.js";
import * as outbox from "./outbox.js";
import { pruneOutbox } from "./prune-outbox.js";
import { prunePublished } from "./prune-published.js";
import { type Key, type PointRead, readByKeys } from "./read-by-keys.js";
import { readFromSnapshots, type SnapshotTailRead } from "./read-from-snapshot.js";
import { type PublishedRead, readPublishedPages } from "./read-published.js";
import { readStates } from "./read-state.js";
import { readStreams, type StreamRead } from "./read-streams.js";
import * as sequencing from "./sequencing.js";
import { guardPool } from "./sql.js";
import * as streams from "./streams.js";
import { summarize } from "./summary.js";
import { type Tables, tables } from "./tables.js";

export interface PostgresJournalOptions {
  connectionString: string;
  /** Schema holding every table (default `public`); created by `migrate()` when absent. */
  schema?: string;
  /** Use this pool instead of creating one; it is not ended by `close()`. */
  pool?: pg.Pool;
  /** Size of the pool created when `pool` is not given (default 10). */
  max?: number;
  /**
   * Group commit: batch size, batches in flight, and how many batches a burst is spread over
   * (default 256, 3 and 2). Batches in flight overlap their round trips and WAL flushes; a burst
   * spread over two batches lets this process handle one's answers while the server applies the
   * other (see `GroupCommitOptions.spreadOver`); writes that share a stream, inbox key or outbox id
   * still apply in submit order (see `GroupCommitOptions.keysOf`).
   */
  groupCommit?: Pick<GroupCommitOptions, "maxBatch" | "maxInFlight" | "spreadOver">;
  /**
   * Slices outbox rows are spread over (see `outboxSlice`); `DEFAULT_SLICE_COUNT` when absent. Every
   * process of one schema must use the same count: rows carry the slice their commit computed.
   */
  sliceCount?: number;
}
/** Reads retry this often on a dead pooled connection (several may have died at once). */
const READ_RETRIES = 3;

/**
 * The server journal: PostgreSQL, shared by any number of processes. Appends use optimistic
 * concurrency on (stream, version); outbox claims use row leases taken with FOR UPDATE SKIP LOCKED;
 * commits that add outbox rows not handed over NOTIFY the schema's channel so dispatchers in other
 * processes wake.
 *
 * Group commit: commits that arrive while batches are in flight queue up and go together as one
 * call of `oncely_commit_packed` (one statement, one round trip, one WAL flush), applied set-wise
 * with the per-commit `oncely_commit` as fallback; each keeps its own result (see commit-batch.ts,
 * and the functions in schema/0001_baseline/). Up to 3 batches are in
 * flight, and a burst is spread over two of them; writes sharing a key keep their submit order.
 *
 * Failure window: when the connection drops during the call, `commit` rejects with
 * `StorageUnavailableError` for EVERY commit of the batch, although the batch may have committed.
 * Callers retry with the same message id; the inbox then answers the retry if the first attempt landed.
 */
export class PostgresJournal implements Journal {
  readonly backend = "postgres";
  readonly tables: Tables;
  /** See `Journal.sliceCount`. */
  get sliceCount(): number {
    return this.tables.sliceCount;
  }
  private readonly pool: pg.Pool;
  private readonly ownsPool: boolean;
  private readonly outboxSignal = new OutboxSignal();
  /**
   * Backend pids of this journal's pool connections: a NOTIFY one of them sent is a commit of this
   * journal, whose listeners were woken when it returned (see `writeBatch`), so the listening
   * connection skips it. A pool given with connections already open sends NOTIFYs from pids not
   * here: those wake every listener, as another process's do, which costs a claim, never a miss.
   */
  private readonly ownBackends = new Set<number>();
  private readonly listener: OutboxListener;
  private readonly publishedListeners = new Set<() => void>();
  private readonly publishedListener: OutboxListener;
  private closed = false;
  private readonly group: GroupCommitter<JournalWrite, WriteAnswer>;
  /** Appends to the published log that arrive together: one call, one transaction (see schema/0001_baseline/oncely_publish_batch.sql). */
  private readonly publishedAppends: GroupCommitter<PublishedAppend, number>;
  /** Point reads that arrive together go to the server as one statement each kind (see read-by-keys.ts). */
  private readonly parkedReads: GroupCommitter<Key, Record<string, unknown>[]>;
  private readonly snapshotReads: GroupCommitter<Key, Record<string, unknown>[]>;
  private readonly outboxReads: GroupCommitter<Key, Record<string, unknown>[]>;
  private readonly versionReads: GroupCommitter<Key, Record<string, unknown>[]>;
  private readonly stateReads: GroupCommitter<StateReads, StateAnswers>;
  /** Reads of the published log that arrive together (its readers, woken by one append): one statement. */
  private readonly publishedReads: GroupCommitter<PublishedRead, PublishedRecord[]>;
  /** Stream reads that arrive together go to the server as one statement (see read-streams.ts). */
  private readonly streamReads: GroupCommitter<StreamRead, EventRecord[]>;
  /** Actors waking together: each one's snapshot and events after it, one statement (read-from-snapshot.ts). */
  private readonly snapshotTailReads: GroupCommitter<SnapshotTailRead, SnapshotTail>;
  /** The last error an idle pooled connection reported (kept for diagnostics; never thrown). */
  lastPoolError: Error | undefined;

  constructor(readonly options: PostgresJournalOptions) {
    this.tables = tables(options.schema ?? "public", journalSliceCount(options.sliceCount));
    this.ownsPool = options.pool === undefined;
    this.pool =
      options.pool ??
      new Pg.Pool({
        connectionString: options.connectionString,
        max: options.max ?? JOURNAL_DEFAULTS.postgresPoolMax,
        application_name: "oncely",
      });
    guardPool(this.pool, (error) => {
      this.lastPoolError = error;
    });
    this.pool.on("connect", (client) => {
      const pid = backendPid(client);
      if (pid !== undefined) this.ownBackends.add(pid);
    });
    this.pool.on("remove", (client) => {
      const pid = backendPid(client);
      if (pid !== undefined) this.ownBackends.delete(pid);
    });
    const isOwn = (pid: number) => this.ownBackends.has(pid);
    this.listener = new OutboxListener(
      { connectionString: options.connectionString, application_name: "oncely-listen" },
      this.tables.channel,
      // The NOTIFY names the categories and slices of what was added: only their owners wake.
      (payload) => this.outboxSignal.wake(parseWakePayload(payload)),
      isOwn,
    );
    this.publishedListener = new OutboxListener(
      { connectionString: options.connectionString, application_name: "oncely-listen" },
      this.tables.publishedChannel,
      () => {
        for (const listener of this.publishedListeners) queueMicrotask(listener);
      },
      isOwn,
    );
    this.group = new GroupCommitter((batch) => this.writeBatch(batch), {
      maxBatch: options.groupCommit?.maxBatch ?? GROUP_COMMIT_DEFAULTS.maxBatch,
      maxInFlight: options.groupCommit?.maxInFlight ?? GROUP_COMMIT_DEFAULTS.postgresInFlight,
      spreadOver: options.groupCommit?.spreadOver ?? GROUP_COMMIT_DEFAULTS.postgresSpreadOver,
      keysOf: writeKeys,
      start: "next-turn",
    });
    // One batch at a time: the function's lock makes appenders take turns anyway, and submit order
    // is then position order.
    this.publishedAppends = new GroupCommitter((batch) => this.appendPublishedBatch(batch), { start: "next-turn" });
    // Two batches of reads in flight keep a long replay from holding up the others.
    this.streamReads = this.batchedReads((q, reads) => readStreams(q, this.tables, reads));
    this.snapshotTailReads = this.batchedReads((q, reads) => readFromSnapshots(q, this.tables, reads));
    this.publishedReads = this.batchedReads((q, reads) => readPublishedPages(q, this.tables, reads));
    const t = this.tables;
    this.parkedReads = this.pointReads({
      table: t.parked,
      columns: PARKED_COLUMNS,
      keys: ["consumer", "source"],
      orderBy: "version",
    });
    this.snapshotReads = this.pointReads({ table: t.snapshots, columns: SNAPSHOT_COLUMNS, keys: ["stream"] });
    // Forwarders waiting on their rows all read at each outbox signal: one statement for all of them.
    this.outboxReads = this.pointReads({ table: t.outbox, columns: OUTBOX_COLUMNS, keys: ["id"] });
    this.versionReads = this.pointReads({ table: t.events, columns: "max(version) AS version", keys: ["stream"] });
    this.stateReads = this.batchedReads((q, reads) => readStates(q, this.tables, reads));
  }

  /** Batch sizes seen by group commit (benchmarks, metrics). */
  get groupCommitStats() {
    return this.group.stats;
  }

  /** Called for each commit queued again after the server answered `retry` (a deadlock, a serialization failure, an append race). */
  onCommitRetry(listener: (reason: unknown) => void): () => void {
    return this.group.onRetry(listener);
  }

  /** Called after each group-commit batch with its size and write time (see `observeJournal`). */
  onGroupCommit(listener: (size: number, seconds: number) => void): () => void {
    return this.group.onBatch(listener);
  }

  /**
   * Reads that arrive together, as one statement (`readMany` answers one result per key, in
   * order); two batches in flight. Reads change nothing, so batches need no keys. A read is
   * complete when it resolves: its batch started after the call. A batch the server refuses as a
   * whole (a key with text it cannot hold) is read again key by key, so that only that read fails.
   */
  private batchedReads<K, R>(readMany: (q: pg.Pool, keys: K[]) => Promise<R[]>): GroupCommitter<K, R> {
    return new GroupCommitter(
      (keys) =>
        wholeOrEachAlone(
          keys,
          (all) => this.read((q) => readMany(q, all)),
          async (key) => (await this.read((q) => readMany(q, [key])))[0] as R,
        ),
      { maxInFlight: 2, start: "next-turn" },
    );
  }

  /** Point reads of one kind (see read-by-keys.ts). */
  private pointReads(read: PointRead): GroupCommitter<Key, Record<string, unknown>[]> {
    return this.batchedReads((q, keys) => readByKeys(q, read, keys));
  }

  /** A write, or anything whose effect must not be repeated: one attempt. */
  private async run<T>(work: (q: pg.Pool) => Promise<T>): Promise<T> {
    try {
      return await work(this.pool);
    } catch (error) {
      throw mapPgError(error);
    }
  }

  /**
   * A read, or work safe to repeat (`migrate`): when the pool handed us a connection that had died
   * (server restart, terminated backend), the pool drops it and the work is tried again on a fresh one.
   */
  private async read<T>(work: (q: pg.Pool) => Promise<T>): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await work(this.pool);
      } catch (error) {
        if (attempt >= READ_RETRIES || !isConnectionError(error)) throw mapPgError(error);
      }
    }
  }

  /**
   * Retried on a fresh connection when the one it used died, as a read is: each migration is one
   * transaction recorded by its version, so a lost connection leaves it either applied (and
   * skipped on the retry) or rolled back. A process that starts while the server drops its
   * connections (a restart, a failover; the chaos run's worker restarts) migrates instead of exiting.
   */
  migrate(): Promise<void> {
    return this.read((pool) => migrate(pool, this.tables));
  }

  async commit(commit: Commit): Promise<CommitResult> {
    // Encode before queueing: a value JSON cannot hold fails this commit alone, with nothing written.
    const result = (await this.group.submit(encodeCommit(commit, this.tables.sliceCount))) as CommitResult;
    // Its NOTIFY skips this process's own listener (as `appendPublished`'s does): readers here are woken now.
    if ((commit.published?.length ?? 0) > 0) for (const listener of this.publishedListeners) queueMicrotask(listener);
    return result;
  }

  /** One statement for the whole batch, outside an explicit transaction: call and COMMIT are one round trip. */
  private async writeBatch(batch: JournalWrite[]) {
    let outcomes: BatchOutcome<WriteAnswer>[];
    try {
      outcomes = await this.run((pool) => commitBatch(pool, this.tables, batch));
    } catch (error) {
      // The batch may have landed (a connection lost at COMMIT) and its NOTIFY, from one of this
      // journal's connections, is skipped: wake every listener rather than leave a row to the poll.
      this.outboxSignal.wake();
      throw error;
    }
    // Local listeners wake for the categories of the rows nobody was handed (the NOTIFY reaches other processes).
    const added = addedRows(batch, outcomes);
    if (!added.empty) this.outboxSignal.wake(added);
    return outcomes;
  }

  /** A lease-held (or, without owner, forced) outbox update, written in the next group-commit batch. */
  private async writeOutbox(id: string, owner: string | null, update: OutboxUpdate, now: number) {
    const answer = await this.group.submit(encodeOutboxWrite(id, owner, update, now));
    return (answer as { status: string | undefined }).status;
  }

  readStream(stream: string, fromVersion = 1, limit = Number.POSITIVE_INFINITY): Promise<EventRecord[]> {
    return this.streamReads.submit({ stream, fromVersion, limit });
  }

  async streamVersion(stream: string): Promise<number> {
    const [row] = await this.versionReads.submit([stream]);
    return Number(row?.version ?? 0);
  }

  async latestSnapshot(stream: string): Promise<SnapshotRecord | undefined> {
    const [row] = await this.snapshotReads.submit([stream]);
    return row ? snapshotRecord(row) : undefined;
  }

  readFromSnapshot(stream: string, limit = Number.POSITIVE_INFINITY): Promise<SnapshotTail> {
    return this.snapshotTailReads.submit({ stream, limit });
  }

  async listStreams(prefix: string, limit = Number.POSITIVE_INFINITY): Promise<string[]> {
    return streamNames(await this.listStreamVersions(prefix, limit));
  }

  listStreamVersions(prefix: string, limit = Number.POSITIVE_INFINITY): Promise<StreamVersion[]> {
    return this.read((q) => streams.listStreamVersions(q, this.tables, prefix, limit));
  }

  async claimOutbox(options: ClaimOptions): Promise<OutboxRow[]> {
    const slices = claimSlices(options, this.tables.sliceCount);
    if (slices?.length === 0) return [];
    return this.run((q) => outbox.claimOutbox(q, this.tables, options));
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

  async getOutbox(id: string): Promise<OutboxRow | undefined> {
    const [row] = await this.outboxReads.submit([id]);
    return row ? outboxRow(row) : undefined;
  }

  listOutbox(filter: OutboxFilter = {}): Promise<OutboxRow[]> {
    return this.read((q) => outbox.listOutbox(q, this.tables, filter));
  }

  async pruneOutbox(before: number, limit?: number): Promise<number> {
    const batch = pruneBatchSize(limit);
    return this.run((q) => pruneOutbox(q, this.tables, before, batch));
  }

  async getInbox(consumer: string, messageId: string): Promise<InboxRecord | undefined> {
    return (await this.stateReads.submit({ inbox: [{ consumer, messageId }] })).inbox[0];
  }

  pruneInbox(before: number): Promise<number> {
    return this.run((q) => inbox.pruneInbox(q, this.tables, before));
  }

  /** One statement for the reads of every caller of this turn (see read-state.ts). */
  readState(reads: StateReads): Promise<StateAnswers> {
    return this.stateReads.submit(reads);
  }

  async getCheckpoint(consumer: string, source: string): Promise<number> {
    return (await this.stateReads.submit({ checkpoints: [{ consumer, source }] })).checkpoints[0] ?? 0;
  }

  async listParked(consumer: string, source?: string): Promise<ParkedRecord[]> {
    if (source === undefined) return this.read((q) => sequencing.listParked(q, this.tables, consumer, source));
    return (await this.parkedReads.submit([consumer, source])).map(parkedRecord);
  }

  forgetConsumer(consumer: string, options: { keepReader?: boolean } = {}): Promise<ForgottenConsumer> {
    return this.run((q) => forgetConsumer(q, this.tables, consumer, !!options.keepReader));
  }

  async getParked(consumer: string, source: string, version: number): Promise<ParkedRecord | undefined> {
    return (await this.stateReads.submit({ parked: [{ consumer, source, version }] })).parked[0];
  }

  summarize(): Promise<JournalSummary> {
    return this.read((q) => summarize(q, this.tables));
  }

  listDeadLetters(filter: DeadLetterFilter = {}): Promise<DeadLetterRecord[]> {
    return this.read((q) => deadLetters.listDeadLetters(q, this.tables, filter));
  }

  pageOutbox(query: OutboxPageQuery): Promise<Page<OutboxRow>> {
    return this.read((q) => consoleQueries.pageOutbox(q, this.tables, query));
  }

  pageDeadLetters(query: DeadLetterPageQuery): Promise<Page<DeadLetterRecord>> {
    return this.read((q) => consoleQueries.pageDeadLetters(q, this.tables, query));
  }

  countDeadLetters(filter: DeadLetterMatch): Promise<number> {
    return this.read((q) => consoleQueries.countDeadLetters(q, this.tables, filter));
  }

  consumerPositions(): Promise<ConsumerPositions> {
    return this.read((q) => consoleQueries.consumerPositions(q, this.tables));
  }

  getDeadLetter(id: string): Promise<DeadLetterRecord | undefined> {
    return this.read((q) => deadLetters.getDeadLetter(q, this.tables, id));
  }

  resolveDeadLetter(id: string, status: "replayed" | "discarded", now: number): Promise<boolean> {
    return this.run((q) => deadLetters.resolveDeadLetter(q, this.tables, id, status, now));
  }

  /**
   * One statement (see schema/0001_baseline/oncely_publish_batch.sql); the NOTIFY inside wakes readers in other processes. Readers
   * here are woken directly once it committed: a NOTIFY reaches this process only while its LISTEN
   * connection is up, and one started just before the append may not be listening yet (a reader
   * would then wait for its next poll).
   */
  async appendPublished(entry: NewPublished, now: number): Promise<number> {
    const position = await this.publishedAppends.submit({ entry, now });
    for (const listener of this.publishedListeners) queueMicrotask(listener);
    return position;
  }

  /**
   * The appends that arrived together, as one call. When the server refuses the batch's data (an
   * entry it cannot store), each entry is appended alone so that only that one fails.
   *
   * Failure window: the connection lost during the call leaves every append of the batch
   * ambiguous; each caller gets `StorageUnavailableError` and appends again, and an entry that did
   * land answers with its position (its message id is in the log), appended once.
   */
  private appendPublishedBatch(batch: PublishedAppend[]): Promise<BatchOutcome<number>[]> {
    return wholeOrEachAlone(
      batch,
      (all) => this.run((q) => appendPublishedBatch(q, this.tables, all)),
      ({ entry, now }) => this.run((q) => appendPublished(q, this.tables, entry, now)),
    );
  }

  async readPublished(after: number, limit?: number, slices?: readonly number[]): Promise<PublishedRecord[]> {
    if (slices === undefined) return this.publishedReads.submit({ after, limit });
    requirePublishedSlices(slices, this.sliceCount);
    return this.publishedReads.submit({ after, limit, slices });
  }

  prunePublished(before: number, limit?: number): Promise<number> {
    const batch = pruneBatchSize(limit);
    return this.run((q) => prunePublished(q, this.tables, before, batch));
  }

  /**
   * Called after appends to the published log by any process on this schema (LISTEN/NOTIFY on a
   * connection of its own, opened on first use), and after that connection reconnects.
   */
  onPublished(listener: () => void): () => void {
    this.publishedListeners.add(listener);
    if (!this.closed) this.publishedListener.start();
    return () => this.publishedListeners.delete(listener);
  }

  /** Resolves once this journal is LISTENing for appends to the published log (starts it if needed). */
  listeningForPublished(): Promise<void> {
    this.publishedListener.start();
    return this.publishedListener.listening();
  }

  async getDocument(collection: string, id: string): Promise<DocumentRecord | undefined> {
    return (await this.stateReads.submit({ documents: [{ collection, id }] })).documents[0];
  }

  listDocuments(collection: string, limit = Number.POSITIVE_INFINITY): Promise<DocumentRecord[]> {
    return this.read((q) => documents.listDocuments(q, this.tables, collection, limit));
  }

  /**
   * Called after commits that added outbox rows, here or in any process using this schema
   * (LISTEN/NOTIFY), and after the listening connection reconnects. Wake-ups may repeat: treat
   * each one as "look at the outbox", never as a count.
   */
  onOutbox(listener: () => void, categories?: readonly OutboxCategory[], owns?: OwnsSlice): () => void {
    const off = this.outboxSignal.add(listener, categories, owns);
    if (!this.closed) this.listener.start();
    return off;
  }

  /** Resolves once this journal is LISTENing for other processes' outbox commits (starts it if needed). */
  listening(): Promise<void> {
    this.listener.start();
    return this.listener.listening();
  }

  async close(): Promise<void> {
    this.outboxSignal.clear();
    this.publishedListeners.clear();
    if (this.closed) return;
    this.closed = true;
    await Promise.all([this.listener.stop(), this.publishedListener.stop()]);
    if (this.ownsPool) await this.pool.end();
  }
}

/** The backend pid of a pooled connection (the `pg` client's `processID`, known once it connected). */
const backendPid = (client: pg.PoolClient): number | undefined => {
  const pid = (client as { processID?: number | null }).processID;
  return typeof pid === "number" ? pid : undefined;
};

/** Categories of the outbox rows the batch's commits inserted not leased and due now: rows someone must claim now. */
function addedRows(batch: JournalWrite[], outcomes: BatchOutcome<WriteAnswer>[]): AddedRowsCollector {
  const added = new AddedRowsCollector();
  batch.forEach((write, i) => {
    const outcome = outcomes[i];
    if (isOutboxWrite(write) || outcome === undefined || !("ok" in outcome)) return;
    const inserted = (outcome.ok as CommitResult).inserted;
    if (inserted === undefined || inserted.length === 0) return;
    for (const row of write.outbox) {
      if (wakesAtCommit(row, write.now) && inserted.some((r) => r.id === row.id)) added.add(row);
    }
  });
  return added;
}
