import {
  CheckpointConflictError,
  DuplicateMessageError,
  InvalidInputError,
  VersionConflictError,
} from "../base/errors.js";
import { checkpointsOf, requireDistinctCheckpoints } from "./checkpoint-writes.js";
import type {
  ConsumerPositions,
  DeadLetterMatch,
  DeadLetterPageQuery,
  OutboxPageQuery,
  Page,
} from "./console-queries.js";
import { effectKeyReuse } from "./effect-key-reuse.js";
import { encodeCommit } from "./encode.js";
import {
  consumerPositionsOf,
  matchesDeadLetter,
  pageDeadLetterRecords,
  pageOutboxRows,
} from "./memory-console-queries.js";
import { AddedRowsCollector, OutboxSignal, type OwnsSlice, updateReleasesRow, wakesAtCommit } from "./outbox-signal.js";
import { claimSlices, journalSliceCount, outboxSlice } from "./outbox-slice.js";
import { holdsOutcomeRow } from "./outcome-record.js";
import { pruneBatchSize } from "./prune.js";
import {
  PUBLISHED_READER_SOURCE,
  PUBLISHED_SLICE_SOURCE_PREFIX,
  passedByEveryReader,
  publishedSlice,
  requirePublishedSlices,
} from "./published.js";
import { applyOutboxUpdate, claimable, copy, matchesOutboxFilter, newOutboxRow } from "./rows.js";
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
} from "./types.js";

/** What the memory journal's fault hook may do to one commit (simulation only). */
export type CommitFault = "abort" | "ambiguous" | undefined;

export class StoreFault extends Error {
  constructor(readonly mode: "abort" | "ambiguous") {
    super(mode === "abort" ? "simulated store failure: commit aborted" : "simulated store failure after commit");
    this.name = "StoreFault";
  }
}

export interface MemoryJournalOptions {
  /**
   * Called before each commit. `abort`: nothing is written and the commit throws.
   * `ambiguous`: everything is written, then the commit throws (the caller cannot know it landed).
   */
  commitFault?: (commit: Commit) => CommitFault;
  /** Slices outbox rows are spread over (see `outboxSlice`); `DEFAULT_SLICE_COUNT` when absent. */
  sliceCount?: number;
}

const key = (...parts: string[]) => parts.join("\u0000");

/**
 * The journal in memory: for tests and deterministic simulation. Values are copied through JSON
 * on the way in and out, as a real store would, so callers can never share references with it.
 */
export class MemoryJournal implements Journal {
  readonly backend = "memory";
  private readonly streams = new Map<string, EventRecord[]>();
  private readonly snapshots = new Map<string, SnapshotRecord>();
  private readonly outbox = new Map<string, OutboxRow>();
  private readonly inbox = new Map<string, InboxRecord>();
  private readonly checkpoints = new Map<string, number>();
  /** When each checkpoint was last set (for `consumerPositions`). */
  private readonly checkpointTimes = new Map<string, number>();
  private readonly parked = new Map<string, ParkedRecord>();
  private readonly deadLetters = new Map<string, DeadLetterRecord>();
  private readonly documents = new Map<string, DocumentRecord>();
  private readonly outboxSignal = new OutboxSignal();
  private readonly eventIds = new Set<string>();
  private seq = 0;
  private published: PublishedRecord[] = [];
  private readonly publishedIds = new Map<string, number>();
  private publishedHead = 0;
  private readonly publishedListeners = new Set<() => void>();
  /** Each outbox row's slice, by id (kept beside the rows: `OutboxRow` has no slice field). */
  private readonly slices = new Map<string, number>();
  readonly sliceCount: number;

  constructor(private readonly options: MemoryJournalOptions = {}) {
    this.sliceCount = journalSliceCount(options.sliceCount);
  }

  async migrate(): Promise<void> {}

  async commit(commit: Commit): Promise<CommitResult> {
    const fault = this.options.commitFault?.(commit);
    if (fault === "abort") throw new StoreFault("abort");
    const result = this.apply(commit);
    if (fault === "ambiguous") throw new StoreFault("ambiguous");
    return result;
  }

  /** Validate everything first, then write: all or nothing. */
  private apply(commit: Commit): CommitResult {
    // A value JSON cannot hold anywhere in the commit (a BigInt in a reply, a document...), or text no
    // back end can store (NUL), fails it before any write, exactly as on SQLite and PostgreSQL.
    encodeCommit(commit);
    const events = commit.events ?? [];
    if (events.length > 0 && commit.stream === undefined) {
      throw new InvalidInputError("a commit with events must name its stream");
    }
    const stream = commit.stream;
    const existing = stream === undefined ? [] : (this.streams.get(stream) ?? []);
    const current = existing.length;
    if (stream !== undefined && commit.expectedVersion !== undefined && commit.expectedVersion !== current) {
      throw new VersionConflictError(stream, commit.expectedVersion, current);
    }
    // A final outcome whose row the consumer holds is recorded by the row's done transition.
    const outcomeRow = commit.inbox?.outcomeOf === undefined ? undefined : this.outbox.get(commit.inbox.outcomeOf);
    const byRow = commit.inbox !== undefined && holdsOutcomeRow(outcomeRow, commit.inbox.consumer);
    if (
      commit.inbox &&
      (byRow ? outcomeRow?.status === "done" : this.inbox.has(key(commit.inbox.consumer, commit.inbox.messageId)))
    ) {
      throw new DuplicateMessageError(commit.inbox.consumer, commit.inbox.messageId);
    }
    const checkpoints = checkpointsOf(commit);
    requireDistinctCheckpoints(checkpoints);
    for (const { consumer, source, expected } of checkpoints) {
      if (expected === undefined) continue;
      const actual = this.checkpoints.get(key(consumer, source)) ?? 0;
      if (actual !== expected) throw new CheckpointConflictError(consumer, source, expected, actual);
    }
    const ids = events.map((e) => e.eventId);
    if (ids.some((id) => this.eventIds.has(id)) || new Set(ids).size !== ids.length) {
      throw new InvalidInputError(`an event id of this commit is already in the journal: ${ids.join(", ")}`);
    }
    const records: EventRecord[] = events.map((event, index) => ({
      eventId: event.eventId,
      stream: stream as string,
      version: current + index + 1,
      type: event.type,
      data: copy(event.data),
      causationId: event.causationId ?? null,
      correlationId: event.correlationId ?? null,
      recordedAt: commit.now,
      schemaVersion: event.schemaVersion ?? 1,
    }));
    // Serialize everything before touching state so that a value JSON cannot hold fails the whole commit.
    const snapshotState = commit.snapshot ? copy(commit.snapshot.state) : undefined;
    const newRows = (commit.outbox ?? []).map((row) => newOutboxRow(row, commit.now, 0));
    for (const row of newRows) {
      const held = row.category === "effect" ? this.outbox.get(row.id) : undefined;
      const reused = held && effectKeyReuse(row.id, held, row);
      if (reused) throw reused;
    }

    if (stream !== undefined && records.length > 0) this.streams.set(stream, [...existing, ...records]);
    for (const id of ids) this.eventIds.add(id);
    if (commit.snapshot && stream !== undefined) {
      this.snapshots.set(stream, {
        stream,
        version: commit.snapshot.version,
        schemaVersion: commit.snapshot.schemaVersion,
        state: snapshotState,
        takenAt: commit.now,
      });
    }
    // Rows inserted leased are handed to the committing process: nobody else needs waking for them.
    const added = new AddedRowsCollector();
    const inserted: { id: string; seq: number }[] = [];
    for (const row of newRows) {
      if (this.outbox.has(row.id)) continue;
      this.outbox.set(row.id, { ...row, seq: ++this.seq });
      const slice = outboxSlice(row, this.sliceCount);
      this.slices.set(row.id, slice);
      inserted.push({ id: row.id, seq: this.seq });
      if (wakesAtCommit(row, commit.now)) added.add({ category: row.category, slice });
    }
    for (const done of commit.outboxDone ?? []) {
      const row = this.outbox.get(done.id);
      if (!row || row.status === "done") continue;
      Object.assign(row, {
        status: "done",
        outcome: done.outcome,
        result: copy(done.result ?? null),
        leaseOwner: null,
        leaseUntil: null,
        updatedAt: commit.now,
      });
    }
    if (commit.inbox && !byRow) {
      const { consumer, messageId, reply } = commit.inbox;
      this.inbox.set(key(consumer, messageId), {
        consumer,
        messageId,
        reply: copy(reply ?? null),
        recordedAt: commit.now,
      });
    }
    for (const { consumer, source, version } of checkpoints) {
      this.checkpoints.set(key(consumer, source), version);
      this.checkpointTimes.set(key(consumer, source), commit.now);
    }
    for (const p of commit.park ?? []) {
      const k = key(p.consumer, p.source, String(p.version));
      if (!this.parked.has(k)) this.parked.set(k, { ...p, message: copy(p.message), parkedAt: commit.now });
    }
    for (const p of commit.unpark ?? []) this.parked.delete(key(p.consumer, p.source, String(p.version)));
    for (const d of commit.deadLetters ?? []) {
      if (!this.deadLetters.has(d.id)) {
        this.deadLetters.set(d.id, { ...d, payload: copy(d.payload), status: "open", resolvedAt: null });
      }
    }
    for (const d of commit.documents ?? []) {
      const k = key(d.collection, d.id);
      if (d.doc === null) this.documents.delete(k);
      else this.documents.set(k, { collection: d.collection, id: d.id, doc: copy(d.doc), updatedAt: commit.now });
    }
    let appended = false;
    for (const entry of commit.published ?? []) appended = this.append(entry, commit.now) || appended;
    if (!added.empty) this.outboxSignal.wake(added);
    if (appended) for (const listener of this.publishedListeners) queueMicrotask(listener);
    return { version: current + records.length, events: copy(records), inserted };
  }

  async readStream(stream: string, fromVersion = 1, limit = Number.POSITIVE_INFINITY): Promise<EventRecord[]> {
    const events = this.streams.get(stream) ?? [];
    return copy(events.slice(Math.max(0, fromVersion - 1), Math.max(0, fromVersion - 1) + limit));
  }

  async streamVersion(stream: string): Promise<number> {
    return this.streams.get(stream)?.length ?? 0;
  }

  async latestSnapshot(stream: string): Promise<SnapshotRecord | undefined> {
    const snapshot = this.snapshots.get(stream);
    return snapshot ? copy(snapshot) : undefined;
  }

  async readFromSnapshot(stream: string, limit = Number.POSITIVE_INFINITY): Promise<SnapshotTail> {
    const snapshot = await this.latestSnapshot(stream);
    return { snapshot, events: await this.readStream(stream, (snapshot?.version ?? 0) + 1, limit) };
  }

  async listStreams(prefix: string, limit = Number.POSITIVE_INFINITY): Promise<string[]> {
    return [...this.streams.keys()]
      .filter((s) => s.startsWith(prefix))
      .sort()
      .slice(0, limit);
  }

  async listStreamVersions(prefix: string, limit = Number.POSITIVE_INFINITY): Promise<StreamVersion[]> {
    const names = await this.listStreams(prefix, limit);
    return names.map((stream) => ({ stream, version: this.streams.get(stream)?.length ?? 0 }));
  }

  async claimOutbox(options: ClaimOptions): Promise<OutboxRow[]> {
    const rows = [...this.outbox.values()].sort((a, b) => a.seq - b.seq);
    const slices = claimSlices(options, this.sliceCount);
    const claimed: OutboxRow[] = [];
    for (const row of rows) {
      if (claimed.length >= options.limit) break;
      if (!claimable(row, options)) continue;
      if (slices && !slices.includes(this.slices.get(row.id) as number)) continue;
      if (
        options.inStreamOrder &&
        rows.some(
          (r) =>
            r.seq < row.seq &&
            r.stream === row.stream &&
            r.category === row.category &&
            r.status !== "done" &&
            r.status !== "dead",
        )
      ) {
        continue;
      }
      row.leaseOwner = options.owner;
      row.leaseUntil = options.now + options.leaseMs;
      row.updatedAt = options.now;
      claimed.push(copy(row));
    }
    return claimed;
  }

  async updateOutbox(id: string, owner: string, update: OutboxUpdate, now: number): Promise<boolean> {
    const row = this.outbox.get(id);
    if (!row || row.leaseOwner !== owner || row.status === "done") return false;
    applyOutboxUpdate(row, update, now);
    if ((row.status === "pending" || row.status === "resolving") && updateReleasesRow(owner, update))
      this.outboxSignal.wake();
    return true;
  }

  async forceOutbox(id: string, update: OutboxUpdate, now: number): Promise<boolean> {
    const row = this.outbox.get(id);
    if (!row || row.status === "done") return false;
    applyOutboxUpdate(row, { ...update, releaseLease: true }, now);
    this.outboxSignal.wake();
    return true;
  }

  async getOutbox(id: string): Promise<OutboxRow | undefined> {
    const row = this.outbox.get(id);
    return row ? copy(row) : undefined;
  }

  async listOutbox(filter: OutboxFilter = {}): Promise<OutboxRow[]> {
    return copy(
      [...this.outbox.values()]
        .filter((row) => matchesOutboxFilter(row, filter))
        .sort((a, b) => a.seq - b.seq)
        .slice(0, filter.limit ?? Number.POSITIVE_INFINITY),
    );
  }

  async pruneOutbox(before: number, limit?: number): Promise<number> {
    const batch = pruneBatchSize(limit);
    let removed = 0;
    for (const [id, row] of this.outbox) {
      if (removed >= batch) break;
      if (row.status === "done" && row.updatedAt < before) {
        this.outbox.delete(id);
        this.slices.delete(id);
        removed++;
      }
    }
    return removed;
  }

  async getInbox(consumer: string, messageId: string): Promise<InboxRecord | undefined> {
    const record = this.inbox.get(key(consumer, messageId));
    return record ? copy(record) : undefined;
  }

  /** One view: the maps are read in one synchronous step, as a store's single statement would. */
  async readState(reads: StateReads): Promise<StateAnswers> {
    const found = <T>(value: T | undefined): T | undefined => (value === undefined ? undefined : copy(value));
    return {
      checkpoints: (reads.checkpoints ?? []).map((r) => this.checkpoints.get(key(r.consumer, r.source)) ?? 0),
      inbox: (reads.inbox ?? []).map((r) => found(this.inbox.get(key(r.consumer, r.messageId)))),
      parked: (reads.parked ?? []).map((r) => found(this.parked.get(key(r.consumer, r.source, String(r.version))))),
      documents: (reads.documents ?? []).map((r) => found(this.documents.get(key(r.collection, r.id)))),
    };
  }

  async pruneInbox(before: number): Promise<number> {
    let removed = 0;
    for (const [k, record] of this.inbox) {
      if (record.recordedAt < before) {
        this.inbox.delete(k);
        removed++;
      }
    }
    return removed;
  }

  async getCheckpoint(consumer: string, source: string): Promise<number> {
    return this.checkpoints.get(key(consumer, source)) ?? 0;
  }

  async listParked(consumer: string, source?: string): Promise<ParkedRecord[]> {
    return copy(
      [...this.parked.values()]
        .filter((p) => p.consumer === consumer && (source === undefined || p.source === source))
        .sort((a, b) => (a.source === b.source ? a.version - b.version : a.source < b.source ? -1 : 1)),
    );
  }

  async forgetConsumer(consumer: string, options: { keepReader?: boolean } = {}): Promise<ForgottenConsumer> {
    const forget = <V>(map: Map<string, V>, owns: (value: V, key: string) => boolean): number => {
      let deleted = 0;
      for (const [k, value] of map) {
        if (!owns(value, k)) continue;
        map.delete(k);
        deleted++;
      }
      return deleted;
    };
    const prefix = key(consumer, "");
    const reader = key(consumer, PUBLISHED_READER_SOURCE);
    return {
      inbox: forget(this.inbox, (record) => record.consumer === consumer),
      checkpoints: forget(
        this.checkpoints,
        (_, k) =>
          k.startsWith(prefix) &&
          !(options.keepReader && (k === reader || k.startsWith(key(consumer, PUBLISHED_SLICE_SOURCE_PREFIX)))),
      ),
      parked: forget(this.parked, (record) => record.consumer === consumer),
    };
  }

  async getParked(consumer: string, source: string, version: number): Promise<ParkedRecord | undefined> {
    const parked = this.parked.get(key(consumer, source, String(version)));
    return parked ? copy(parked) : undefined;
  }

  async summarize(): Promise<JournalSummary> {
    const outbox = new Map<string, JournalSummary["outbox"][number]>();
    for (const row of this.outbox.values()) {
      if (row.status === "done") continue;
      const k = key(row.category, row.kind, row.status);
      const group = outbox.get(k);
      if (group) {
        group.count++;
        group.oldestCreatedAt = Math.min(group.oldestCreatedAt, row.createdAt);
      } else {
        outbox.set(k, {
          category: row.category,
          kind: row.kind,
          status: row.status,
          count: 1,
          oldestCreatedAt: row.createdAt,
        });
      }
    }
    const perConsumer = (items: { consumer: string; at: number }[]) => {
      const groups = new Map<string, { consumer: string; count: number; oldest: number }>();
      for (const { consumer, at } of items) {
        const group = groups.get(consumer) ?? { consumer, count: 0, oldest: at };
        group.count++;
        group.oldest = Math.min(group.oldest, at);
        groups.set(consumer, group);
      }
      return [...groups.values()].sort((a, b) => (a.consumer < b.consumer ? -1 : a.consumer > b.consumer ? 1 : 0));
    };
    const byKey = (a: { k: string }, b: { k: string }) => (a.k < b.k ? -1 : a.k > b.k ? 1 : 0);
    return {
      outbox: [...outbox.entries()]
        .map(([k, group]) => ({ k, group }))
        .sort(byKey)
        .map(({ group }) => group),
      parked: perConsumer([...this.parked.values()].map((p) => ({ consumer: p.consumer, at: p.parkedAt }))).map(
        ({ consumer, count, oldest }) => ({ consumer, count, oldestParkedAt: oldest }),
      ),
      deadLetters: perConsumer(
        [...this.deadLetters.values()]
          .filter((d) => d.status === "open")
          .map((d) => ({ consumer: d.consumer, at: d.firstFailedAt })),
      ).map(({ consumer, count, oldest }) => ({ consumer, count, oldestFailedAt: oldest })),
    };
  }

  async pageOutbox(query: OutboxPageQuery): Promise<Page<OutboxRow>> {
    return copy(pageOutboxRows(this.outbox.values(), query));
  }

  async pageDeadLetters(query: DeadLetterPageQuery): Promise<Page<DeadLetterRecord>> {
    return copy(pageDeadLetterRecords(this.deadLetters.values(), query));
  }

  async countDeadLetters(filter: DeadLetterMatch): Promise<number> {
    return [...this.deadLetters.values()].filter((d) => matchesDeadLetter(d, filter)).length;
  }

  async consumerPositions(): Promise<ConsumerPositions> {
    const checkpoints = [...this.checkpoints].map(([k, version]) => {
      const [consumer, source] = k.split("\u0000") as [string, string];
      return { consumer, source, version, updatedAt: this.checkpointTimes.get(k) ?? 0 };
    });
    const head = this.published.reduce((max, p) => Math.max(max, p.position), 0);
    return copy(consumerPositionsOf(checkpoints, this.parked.values(), head));
  }

  async listDeadLetters(filter: DeadLetterFilter = {}): Promise<DeadLetterRecord[]> {
    return copy(
      [...this.deadLetters.values()]
        .filter(
          (d) =>
            (filter.consumer === undefined || d.consumer === filter.consumer) &&
            (filter.status === undefined || d.status === filter.status),
        )
        .sort((a, b) => a.firstFailedAt - b.firstFailedAt || (a.id < b.id ? -1 : 1))
        .slice(0, filter.limit ?? Number.POSITIVE_INFINITY),
    );
  }

  async getDeadLetter(id: string): Promise<DeadLetterRecord | undefined> {
    const d = this.deadLetters.get(id);
    return d ? copy(d) : undefined;
  }

  async resolveDeadLetter(id: string, status: "replayed" | "discarded", now: number): Promise<boolean> {
    const d = this.deadLetters.get(id);
    if (d?.status !== "open") return false;
    d.status = status;
    d.resolvedAt = now;
    return true;
  }

  async appendPublished(entry: NewPublished, now: number): Promise<number> {
    const known = this.publishedIds.get(entry.messageId);
    if (known !== undefined) return known;
    this.append(entry, now);
    for (const listener of this.publishedListeners) queueMicrotask(listener);
    return this.publishedHead;
  }

  /** One entry appended (a commit's or `appendPublished`'s); false when its message id was known. */
  private append(entry: NewPublished, now: number): boolean {
    if (this.publishedIds.has(entry.messageId)) return false;
    const position = ++this.publishedHead;
    this.published.push(
      copy({
        position,
        messageId: entry.messageId,
        subject: entry.subject,
        body: entry.body,
        publishedAt: now,
        slice: publishedSlice(entry, this.sliceCount),
      }),
    );
    this.publishedIds.set(entry.messageId, position);
    return true;
  }

  async readPublished(
    after: number,
    limit = Number.POSITIVE_INFINITY,
    slices?: readonly number[],
  ): Promise<PublishedRecord[]> {
    if (slices !== undefined) requirePublishedSlices(slices, this.sliceCount);
    const wanted = slices === undefined ? undefined : new Set(slices);
    return copy(
      this.published.filter((p) => p.position > after && (wanted === undefined || wanted.has(p.slice))).slice(0, limit),
    );
  }

  async prunePublished(before: number, limit?: number): Promise<number> {
    const batch = pruneBatchSize(limit);
    const passed = passedByEveryReader(
      [...this.checkpoints].map(([k, version]) => {
        const [consumer, source] = k.split("\u0000") as [string, string];
        return { consumer, source, version };
      }),
    );
    const doomed = this.published.filter((p) => p.publishedAt < before && passed(p.slice, p.position)).slice(0, batch);
    const gone = new Set(doomed.map((p) => p.position));
    this.published = this.published.filter((p) => !gone.has(p.position));
    for (const p of doomed) this.publishedIds.delete(p.messageId);
    return doomed.length;
  }

  onPublished(listener: () => void): () => void {
    this.publishedListeners.add(listener);
    return () => this.publishedListeners.delete(listener);
  }

  async getDocument(collection: string, id: string): Promise<DocumentRecord | undefined> {
    const d = this.documents.get(key(collection, id));
    return d ? copy(d) : undefined;
  }

  async listDocuments(collection: string, limit = Number.POSITIVE_INFINITY): Promise<DocumentRecord[]> {
    return copy(
      [...this.documents.values()]
        .filter((d) => d.collection === collection)
        .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
        .slice(0, limit),
    );
  }

  onOutbox(listener: () => void, categories?: readonly OutboxCategory[], owns?: OwnsSlice): () => void {
    return this.outboxSignal.add(listener, categories, owns);
  }

  async close(): Promise<void> {
    this.outboxSignal.clear();
    this.publishedListeners.clear();
  }
}

export const memoryJournal = (options?: MemoryJournalOptions): MemoryJournal => new MemoryJournal(options);
