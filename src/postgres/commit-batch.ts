import {
  CheckpointConflictError,
  DuplicateMessageError,
  IdempotencyKeyReusedError,
  InvalidInputError,
  VersionConflictError,
} from "../base/errors.js";
import { mapped } from "../base/mapped.js";
import { effectKeyReuse } from "../journal/effect-key-reuse.js";
import {
  appendedRecords,
  isOutboxWrite,
  type JournalWrite,
  type OutboxWrite,
  type WriteAnswer,
  writeKeys,
} from "../journal/encode.js";
import type { EncodedCommit } from "../journal/encoded-commit.js";
import type { BatchOutcome } from "../journal/group-commit.js";
import { AddedRowsCollector, updateReleasesRow, wakePayload, wakesAtCommit } from "../journal/outbox-signal.js";
import type { CommitResult } from "../journal/types.js";
import { mapPgError } from "./errors.js";
import { DONE_FIELDS, EVENT_FIELDS, OUTBOX_FIELDS } from "./packed-rows.js";
import { prepared } from "./prepared.js";
import type { Queryable } from "./sql.js";
import type { Tables } from "./tables.js";

/**
 * The client half of group commit on PostgreSQL: each commit becomes one JSON text (values that
 * are JSON already are spliced in, never parsed again), the batch goes to `oncely_commit_packed`
 * (schema/0001_baseline/oncely_commit_packed.sql) as ONE JSON array text in ONE statement outside an explicit transaction,
 * with the positions of the commits that share a key with an earlier one, and the answer comes back
 * as one JSON text: a result per commit, and the seqs of the outbox rows the set path inserted.
 *
 * The texts are built by concatenation, not by joining arrays of pieces: V8 keeps a concatenation
 * as a rope and copies each byte once, when the statement is sent, where every level of joins
 * copied a nested value (an event's data, an effect's payload) again (measured on the order workflow:
 * building the commits' JSON was a fifth of every byte the client process allocated).
 */

const str = (v: string | null | undefined): string => (v === undefined ? "null" : JSON.stringify(v));
const num = (v: number | null | undefined): string => (v === undefined || v === null ? "null" : String(v));
/** One `"key":value` member, or nothing when the value is undefined. */
const field = (key: string, value: string | undefined): string => (value === undefined ? "" : `"${key}":${value}`);
const obj = (...members: string[]): string => {
  let out = "";
  for (const member of members) {
    if (member !== "") out = out === "" ? member : `${out},${member}`;
  }
  return `{${out}}`;
};
const arr = <T>(items: readonly T[], each: (item: T) => string): string => {
  let out = "";
  for (let i = 0; i < items.length; i++) out = i === 0 ? each(items[i] as T) : `${out},${each(items[i] as T)}`;
  return `[${out}]`;
};

/**
 * One row: its values in the order of `fields` (packed-rows.ts), as a positional array (packed) or
 * as an object named by the same list, so the two formats cannot disagree on a field's place.
 */
const row = (fields: readonly string[], values: readonly string[], packed: boolean): string => {
  let out = "";
  for (let i = 0; i < fields.length; i++) {
    const member = packed ? (values[i] as string) : field(fields[i] as string, values[i]);
    out = i === 0 ? member : `${out},${member}`;
  }
  return packed ? `[${out}]` : `{${out}}`;
};

const PARK_FIELDS = ["consumer", "source", "version", "message"] as const;
const UNPARK_FIELDS = ["consumer", "source", "version"] as const;
const DEAD_FIELDS = [
  "id",
  "consumer",
  "message_id",
  "payload",
  "error",
  "stack",
  "attempts",
  "first_failed_at",
  "last_failed_at",
] as const;

/** An array member, always written (the object format). */
const always = <T>(key: string, items: readonly T[], each: (item: T) => string): string => field(key, arr(items, each));
/** An array member left out when empty (the packed format's rarely filled arrays, packed-rows.ts). */
const rare = <T>(key: string, items: readonly T[], each: (item: T) => string): string =>
  items.length === 0 ? "" : always(key, items, each);

/**
 * The commit as the function reads it (keys absent where the commit has nothing). `packed`: its
 * events, outbox rows and done rows as arrays, fields in the orders of packed-rows.ts, and the
 * rarely filled arrays left out when empty, for `oncely_commit_packed`.
 */
export function commitJson(c: EncodedCommit, packed = false): string {
  const list = packed ? rare : always;
  return obj(
    field("stream", c.stream === undefined ? undefined : str(c.stream)),
    field("expected", c.expectedVersion === undefined ? undefined : num(c.expectedVersion)),
    field("now", num(c.now)),
    field(
      "events",
      arr(c.events, (e) =>
        row(
          EVENT_FIELDS,
          [str(e.eventId), str(e.type), e.data, str(e.causationId), str(e.correlationId), num(e.schemaVersion)],
          packed,
        ),
      ),
    ),
    field(
      "snapshot",
      c.snapshot &&
        obj(
          field("version", num(c.snapshot.version)),
          field("schema_version", num(c.snapshot.schemaVersion)),
          field("state", c.snapshot.state),
        ),
    ),
    field(
      "inbox",
      c.inbox &&
        obj(
          field("consumer", str(c.inbox.consumer)),
          field("message_id", str(c.inbox.messageId)),
          field("reply", c.inbox.reply),
          field("outcome_of", c.inbox.outcomeOf === undefined ? undefined : str(c.inbox.outcomeOf)),
        ),
    ),
    // Left out when empty: the set path takes commits whose checkpoints are only guards that hold.
    rare("checkpoints", c.checkpoints, (checkpoint) =>
      obj(
        field("consumer", str(checkpoint.consumer)),
        field("source", str(checkpoint.source)),
        field("version", num(checkpoint.version)),
        field("expected", checkpoint.expected === undefined ? undefined : num(checkpoint.expected)),
      ),
    ),
    field(
      "outbox",
      arr(c.outbox, (o) =>
        row(
          OUTBOX_FIELDS,
          [
            str(o.id),
            str(o.category),
            str(o.kind),
            str(o.stream),
            o.payload,
            num(o.notBefore),
            str(o.leaseOwner),
            num(o.leaseUntil),
            num(o.attempts),
            o.result,
            num(o.slice),
          ],
          packed,
        ),
      ),
    ),
    field(
      "done",
      arr(c.outboxDone, (d) => row(DONE_FIELDS, [str(d.id), str(d.outcome), d.result], packed)),
    ),
    // The rarely filled arrays keep their objects in both formats.
    list("park", c.park, (p) => row(PARK_FIELDS, [str(p.consumer), str(p.source), num(p.version), p.message], false)),
    list("unpark", c.unpark, (p) => row(UNPARK_FIELDS, [str(p.consumer), str(p.source), num(p.version)], false)),
    list("dead", c.deadLetters, (d) =>
      row(
        DEAD_FIELDS,
        [
          str(d.id),
          str(d.consumer),
          str(d.messageId),
          d.payload,
          str(d.error),
          str(d.stack),
          num(d.attempts),
          num(d.firstFailedAt),
          num(d.lastFailedAt),
        ],
        false,
      ),
    ),
    list("docs", c.documents, (d) =>
      obj(
        field("collection", str(d.collection)),
        field("id", str(d.id)),
        field("delete", d.doc === null ? "true" : "false"),
        field("doc", d.doc ?? "null"),
      ),
    ),
    // Only oncely_commit reads it (schema 0008): a commit that has entries goes there (`sharingKeys`).
    rare("published", c.published, (p) =>
      obj(
        field("message_id", str(p.messageId)),
        field("subject", str(p.subject)),
        field("body", str(p.body)),
        field("slice", num(p.slice)),
      ),
    ),
  );
}

/** A lease-held outbox update as the function reads it (`{"update": ...}`). */
export function outboxWriteJson(w: OutboxWrite): string {
  const u = w.update;
  return obj(
    field(
      "update",
      obj(
        field("id", str(w.id)),
        field("owner", str(w.owner)),
        field("force", w.owner === null ? "true" : "false"),
        field("now", num(w.now)),
        field("status", u.status === undefined ? undefined : str(u.status)),
        field("attempts", u.attempts === undefined ? undefined : num(u.attempts)),
        field("not_before", u.notBefore === undefined ? undefined : num(u.notBefore)),
        field("last_error", u.lastError === undefined ? undefined : str(u.lastError)),
        field("outcome", u.outcome === undefined ? undefined : str(u.outcome)),
        field("result", w.resultJson),
        field("release", (u.releaseLease ?? true) ? "true" : "false"),
      ),
    ),
  );
}

interface FunctionResult {
  status?: string | null;
  version?: number;
  /** The keyed function's answer for a commit the set path applied: its stream's version before it. */
  base?: number;
  inserted?: [string, number | string][];
  conflict?: number;
  checkpoint?: number;
  /** Which of the commit's checkpoints refused it (its index). */
  at?: number;
  duplicate?: boolean;
  invalid?: string;
  reused?: string;
  held?: { stream: string; kind: string; payload: unknown };
  retry?: string;
  error?: string;
  code?: string;
  constraint?: string;
}

/** Apply a batch in one statement; one outcome per commit, in order. A thrown error fails the whole batch. */
export async function commitBatch(
  q: Queryable,
  t: Tables,
  writes: JournalWrite[],
): Promise<BatchOutcome<WriteAnswer>[]> {
  const texts = (w: JournalWrite, packed = false) => (isOutboxWrite(w) ? outboxWriteJson(w) : commitJson(w, packed));
  // A lone commit goes straight to the per-commit function as plain text: through the JSON batch
  // function it would be parsed as jsonb, printed back to text and parsed again (measured: 5,000-event
  // commits took a quarter longer that way).
  const lone = writes.length === 1;
  // The NOTIFY's payload (schema 0010_wake_owners): what the batch adds, so that only its owners wake.
  const wake = batchWakePayload(writes);
  const result = await q.query(
    lone
      ? prepared(`SELECT '{"results": [' || (${t.commitFunction}(ARRAY[$1::text], $2, $3))[1] || ']}' AS r`, [
          texts(writes[0] as JournalWrite),
          t.channel,
          wake,
        ])
      : prepared(`SELECT ${t.commitPackedFunction}($1::text, $2::integer[], $3, $4) AS r`, [
          arr(writes, (w) => texts(w, true)),
          sharingKeys(writes),
          t.channel,
          wake,
        ]),
  );
  const { results: answers, seqs = {} } = JSON.parse(result.rows[0].r as string) as {
    results: (FunctionResult | null)[];
    seqs?: Record<string, number | string>;
  };
  return mapped(writes, (w, index) => {
    const answer = answers[index];
    // A batch answered short would be a server-side bug; each commit left without an answer says so.
    return answer
      ? outcomeOf(w, answer, seqs)
      : { error: new Error("group commit: the store answered no result for this commit") };
  });
}

/**
 * What the batch's NOTIFY says it added (`wakePayload`): the categories and slices of its commits'
 * rows that are due now and not handed over. The server sends the NOTIFY only when some row was
 * inserted so (or an update left one pending), so naming a row of a commit that failed wakes its
 * owner for nothing, never anyone too few. An update that may leave a row claimable (pending with its
 * lease released, or forced) names a row the client cannot place: `*`, everyone wakes. One that
 * keeps its lease (an attempt recorded before the call) adds nothing: the server's NOTIFY for it
 * then says `/`, and nobody wakes.
 */
export function batchWakePayload(writes: readonly JournalWrite[]): string {
  const added = new AddedRowsCollector();
  for (const w of writes) {
    if (isOutboxWrite(w)) {
      if (mayReopen(w)) return wakePayload(undefined);
      continue;
    }
    for (const row of w.outbox) if (wakesAtCommit(row, w.now)) added.add(row);
  }
  return wakePayload(added);
}

/** Whether an update may leave its row claimable (pending or resolving, its lease released). */
const mayReopen = (w: OutboxWrite): boolean => {
  const status = w.update.status;
  const open = status === undefined || status === "pending" || status === "resolving";
  return updateReleasesRow(w.owner, w.update) && (open || w.owner === null);
};

/**
 * The positions (1-based) of the writes that share a key with an earlier write of the batch: the
 * keyed function leaves them to its per-commit path, after the others, in batch order. The keys are
 * those group commit already orders writes by (`writeKeys`). A commit that appends to the published
 * log goes there too: only the per-commit path appends (schema 0008_published_at_commit).
 */
function sharingKeys(writes: JournalWrite[]): number[] {
  const seen = new Set<string>();
  const later: number[] = [];
  writes.forEach((w, index) => {
    const keys = writeKeys(w);
    const publishes = !isOutboxWrite(w) && w.published.length > 0;
    if (publishes || keys.some((k) => seen.has(k))) later.push(index + 1);
    for (const k of keys) seen.add(k);
  });
  return later;
}

/** A commit the set path applied at `base`: its version, and the outbox rows it inserted (by seq). */
function applied(c: EncodedCommit, base: number, seqs: Record<string, number | string>): CommitResult {
  const inserted: { id: string; seq: number }[] = [];
  // An id listed twice was inserted once: one entry (a set only when there can be a repeat).
  const seen = c.outbox.length > 1 ? new Set<string>() : undefined;
  for (const row of c.outbox) {
    const seq = seqs[row.id];
    if (seq === undefined || seen?.has(row.id)) continue;
    seen?.add(row.id);
    inserted.push({ id: row.id, seq: Number(seq) });
  }
  if (inserted.length > 1) inserted.sort((a, b) => a.seq - b.seq);
  return { version: base + c.events.length, events: appendedRecords(c, base), inserted };
}

function outcomeOf(
  w: JournalWrite,
  r: FunctionResult,
  seqs: Record<string, number | string>,
): BatchOutcome<WriteAnswer> {
  if (isOutboxWrite(w)) {
    if (r.status === undefined) return { error: serverError(r.error ?? "outbox update failed", r.code) };
    return { ok: { status: r.status ?? undefined } };
  }
  const c = w;
  if (r.base !== undefined) return { ok: applied(c, r.base, seqs) };
  if (r.version !== undefined) {
    const version = r.version;
    return {
      ok: {
        version,
        events: appendedRecords(c, version - c.events.length),
        inserted: mapped(r.inserted ?? [], ([id, seq]) => ({ id, seq: Number(seq) })),
      },
    };
  }
  const stream = c.stream as string;
  if (r.conflict !== undefined) {
    return { error: new VersionConflictError(stream, c.expectedVersion ?? r.conflict, r.conflict) };
  }
  if (r.duplicate && c.inbox) return { error: new DuplicateMessageError(c.inbox.consumer, c.inbox.messageId) };
  const refusedBy = r.checkpoint === undefined ? undefined : c.checkpoints[r.at ?? 0];
  if (r.checkpoint !== undefined && refusedBy) {
    const { consumer, source, expected } = refusedBy;
    return { error: new CheckpointConflictError(consumer, source, expected ?? 0, r.checkpoint) };
  }
  if (r.reused !== undefined) return { error: reusedKeyError(c, r.reused, r.held) };
  if (r.invalid !== undefined) {
    return { error: new InvalidInputError(`an event id of this commit is already in the journal: ${r.invalid}`) };
  }
  if (r.retry !== undefined) {
    // A deadlock or serialization failure keeps the server's error; an append race is a conflict.
    return { retry: r.code ? serverError(r.retry, r.code) : new VersionConflictError(stream, 0, undefined) };
  }
  return { error: serverError(r.error ?? "commit failed", r.code, r.constraint) };
}

/** The server found the key held by another request; name what differs, as every journal does. */
function reusedKeyError(c: EncodedCommit, key: string, held: FunctionResult["held"]): IdempotencyKeyReusedError {
  const wanted = c.outbox.find((row) => row.id === key);
  const named = held && wanted && effectKeyReuse(key, held, { ...wanted, payload: JSON.parse(wanted.payload) });
  return named || new IdempotencyKeyReusedError(key);
}

/**
 * The server's own error, shaped as the driver raises it (message, SQLSTATE, constraint), then
 * mapped as any driver error is (a data error no retry can fix becomes `TerminalStorageError`).
 */
const serverError = (message: string, code: string | undefined, constraint?: string): unknown =>
  mapPgError(Object.assign(new Error(message), { code, ...(constraint === undefined ? {} : { constraint }) }));
