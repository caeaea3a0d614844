import { InvalidInputError } from "../base/errors.js";
import { mapped } from "../base/mapped.js";
import { checkpointsOf, requireDistinctCheckpoints } from "./checkpoint-writes.js";
import type { EncodedCommit } from "./encoded-commit.js";
import { outboxSlice } from "./outbox-slice.js";
import { publishedSlice } from "./published.js";
import { requireStorableCommit, storableDeadLetter } from "./storable.js";
import type { Commit, CommitResult, EventRecord, NewOutboxRow, OutboxUpdate } from "./types.js";

/**
 * A lease-held outbox update (or, with `owner` null, a forced one) queued with the commits, so
 * that a dispatcher's writes join the same group-commit batches. `resultJson` is the update's
 * result already encoded: a value JSON cannot hold fails this write alone, before the batch.
 */
export interface OutboxWrite {
  outboxWrite: true;
  id: string;
  owner: string | null;
  update: OutboxUpdate;
  resultJson: string | undefined;
  now: number;
}

/** What a SQL back end's group commit carries, and what each item is answered. */
export type JournalWrite = EncodedCommit | OutboxWrite;
export type WriteAnswer = CommitResult | { status: string | undefined };

export const isOutboxWrite = (write: JournalWrite): write is OutboxWrite => "outboxWrite" in write;

export function encodeOutboxWrite(id: string, owner: string | null, update: OutboxUpdate, now: number): OutboxWrite {
  return {
    outboxWrite: true,
    id,
    owner,
    update,
    resultJson: update.result === undefined ? undefined : json(update.result),
    now,
  };
}

/** JSON text of a value; `undefined` is stored as `null`. Throws a TypeError on BigInt or cycles. */
export function json(value: unknown): string {
  const text = JSON.stringify(value === undefined ? null : value);
  // JSON.stringify returns undefined for a bare function or symbol: store null, as a property would be dropped.
  return text === undefined ? "null" : text;
}

/**
 * The JSON text each outbox row was last encoded to, by row object: a row handed over after its
 * commit (see `newOutboxRow`) is parsed from the text the store was given instead of being
 * stringified a second time. Weak, so it is forgotten with the row. Rows are encoded again on
 * every commit, so a row object committed twice maps to its latest text.
 */
const encodedRows = new WeakMap<NewOutboxRow, { payload: string; result: string }>();

/** The payload and lease result of `row` as its commit encoded them, or undefined when never encoded. */
export const encodedOutboxRow = (row: NewOutboxRow): { payload: string; result: string } | undefined =>
  encodedRows.get(row);

/**
 * Throws `TerminalStorageError` (nothing written) when a part other than a dead letter holds text
 * no back end can store; dead letters are escaped instead (see `./storable.ts`). Each outbox row
 * gets its slice among `sliceCount` (the journal's option; see `outboxSlice`).
 */
export function encodeCommit(commit: Commit, sliceCount?: number): EncodedCommit {
  const encoded = encodeParts(commit, sliceCount);
  requireStorableCommit(encoded);
  return encoded;
}

function encodeParts(commit: Commit, sliceCount: number | undefined): EncodedCommit {
  const events = commit.events ?? [];
  if (events.length > 0 && commit.stream === undefined) {
    throw new InvalidInputError("a commit with events must name its stream");
  }
  const checkpoints = checkpointsOf(commit);
  requireDistinctCheckpoints(checkpoints);
  return {
    stream: commit.stream,
    expectedVersion: commit.expectedVersion,
    now: commit.now,
    events: mapped(events, (event) => ({
      eventId: event.eventId,
      type: event.type,
      data: json(event.data),
      causationId: event.causationId ?? null,
      correlationId: event.correlationId ?? null,
      schemaVersion: event.schemaVersion ?? 1,
    })),
    snapshot:
      commit.snapshot && commit.stream !== undefined
        ? {
            version: commit.snapshot.version,
            schemaVersion: commit.snapshot.schemaVersion,
            state: json(commit.snapshot.state),
          }
        : undefined,
    outbox: mapped(commit.outbox ?? [], (row) => {
      const text = { payload: json(row.payload), result: json(row.lease?.result ?? null) };
      encodedRows.set(row, text);
      return {
        id: row.id,
        category: row.category,
        kind: row.kind,
        stream: row.stream,
        payload: text.payload,
        notBefore: row.notBefore,
        leaseOwner: row.lease?.owner ?? null,
        leaseUntil: row.lease?.until ?? null,
        attempts: row.lease?.attempts ?? 0,
        result: text.result,
        slice: outboxSlice(row, sliceCount),
      };
    }),
    outboxDone: mapped(commit.outboxDone ?? [], (done) => ({
      id: done.id,
      outcome: done.outcome,
      result: json(done.result ?? null),
    })),
    inbox: commit.inbox
      ? {
          consumer: commit.inbox.consumer,
          messageId: commit.inbox.messageId,
          reply: json(commit.inbox.reply ?? null),
          outcomeOf: outcomeRowOf(commit),
        }
      : undefined,
    checkpoints: mapped(checkpoints, (checkpoint) => ({
      consumer: checkpoint.consumer,
      source: checkpoint.source,
      version: checkpoint.version,
      expected: checkpoint.expected,
    })),
    park: mapped(commit.park ?? [], (p) => ({
      consumer: p.consumer,
      source: p.source,
      version: p.version,
      message: json(p.message),
    })),
    unpark: mapped(commit.unpark ?? [], (p) => ({ consumer: p.consumer, source: p.source, version: p.version })),
    deadLetters: mapped(commit.deadLetters ?? [], (d) => ({
      id: d.id,
      consumer: d.consumer,
      ...storableDeadLetter(
        { messageId: d.messageId ?? null, payload: json(d.payload), error: d.error, stack: d.stack ?? null },
        d.payload,
      ),
      attempts: d.attempts,
      firstFailedAt: d.firstFailedAt,
      lastFailedAt: d.lastFailedAt,
    })),
    documents: mapped(commit.documents ?? [], (d) => ({
      collection: d.collection,
      id: d.id,
      doc: d.doc === null ? null : json(d.doc),
    })),
    published: mapped(commit.published ?? [], (entry) => ({
      messageId: entry.messageId,
      subject: entry.subject,
      body: entry.body,
      slice: publishedSlice(entry, sliceCount),
    })),
  };
}

/** `inbox.outcomeOf`, checked: the row must be finished by the same commit, and the reply null. */
function outcomeRowOf(commit: Commit): string | undefined {
  const id = commit.inbox?.outcomeOf;
  if (id === undefined) return undefined;
  if (!(commit.outboxDone ?? []).some((done) => done.id === id)) {
    throw new InvalidInputError(`inbox.outcomeOf "${id}" names an outbox row this commit does not mark done`);
  }
  if ((commit.inbox?.reply ?? null) !== null) {
    throw new InvalidInputError(`inbox.outcomeOf "${id}" needs a null reply: a done outbox row keeps no reply`);
  }
  return id;
}

/** The records a commit appended, as `commit` returns them (fresh copies, never the caller's objects). */
export function appendedRecords(encoded: EncodedCommit, fromVersion: number): EventRecord[] {
  return mapped(encoded.events, (event, index) => ({
    eventId: event.eventId,
    stream: encoded.stream as string,
    version: fromVersion + index + 1,
    type: event.type,
    data: JSON.parse(event.data),
    causationId: event.causationId,
    correlationId: event.correlationId,
    recordedAt: encoded.now,
    schemaVersion: event.schemaVersion,
  }));
}

/** Each write's keys, computed once: group commit orders batches by them, and PostgreSQL's client sends them. */
const keysOfWrite = new WeakMap<JournalWrite, readonly string[]>();

/**
 * What a write touches, for group commit with several batches in flight (`GroupCommitOptions.keysOf`):
 * writes sharing a key are applied in submit order. A NUL separates parts, since no stored text holds one.
 */
export function writeKeys(write: JournalWrite): readonly string[] {
  let keys = keysOfWrite.get(write);
  if (!keys) {
    keys = keysOf(write);
    keysOfWrite.set(write, keys);
  }
  return keys;
}

/** A checkpoint that moves nothing: it refuses its commit unless it stands at `expected` (not 0). */
export const isGuard = (c: { version: number; expected?: number | undefined }): boolean =>
  c.expected !== undefined && c.expected !== 0 && c.expected === c.version;

function keysOf(write: JournalWrite): string[] {
  if (isOutboxWrite(write)) return [`o\0${write.id}`];
  const keys: string[] = [];
  if (write.stream !== undefined) keys.push(`s\0${write.stream}`);
  if (write.inbox) keys.push(`i\0${write.inbox.consumer}\0${write.inbox.messageId}`);
  for (const checkpoint of write.checkpoints) {
    // A guard (a slice's fence) writes nothing: commits guarded by the same checkpoint commute and may
    // share a batch and overlap in flight. The store's row lock orders a guard against a move of the same
    // checkpoint; a worker takes a fencing token only from a move that has returned, so no guard of a
    // token is submitted while the move that sets it is in flight.
    if (isGuard(checkpoint)) continue;
    keys.push(`c\0${checkpoint.consumer}\0${checkpoint.source}`);
  }
  for (const row of write.outbox) keys.push(`o\0${row.id}`);
  for (const done of write.outboxDone) keys.push(`o\0${done.id}`);
  for (const p of [...write.park, ...write.unpark]) keys.push(`p\0${p.consumer}\0${p.source}\0${p.version}`);
  for (const d of write.deadLetters) keys.push(`d\0${d.id}`);
  for (const d of write.documents) keys.push(`D\0${d.collection}\0${d.id}`);
  return keys;
}
