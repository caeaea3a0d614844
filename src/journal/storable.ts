import { TerminalStorageError } from "../base/errors.js";
import { escapeUnstorable, isStorableText, unstorableReason } from "../base/storable-text.js";
import type { EncodedCommit } from "./encoded-commit.js";
import type { DeadLetterRecord } from "./types.js";

/**
 * What every back end stores, decided once here for all of them (SQL back ends go through
 * `encodeCommit`, the memory journal too), so a rule holds the same on memory, SQLite and
 * PostgreSQL:
 *
 * - Events, snapshots, outbox rows, inbox rows, checkpoints, parked messages and documents must
 *   hold only storable text (no NUL, no unpaired surrogate, see `src/base/storable-text.ts`).
 *   Anything else fails the commit with `TerminalStorageError`, nothing written: no retry helps.
 * - Dead letters store ANY text, faithfully: a message that cannot be handled must always be
 *   able to leave its consumer. Unstorable text is escaped in the columns (readable, filterable)
 *   and the originals are kept JSON-encoded inside the payload, as a JSON string (whose
 *   backslashes every store keeps), under `ESCAPED`; reading a dead letter restores them.
 */

/** Key of the payload wrapper holding a dead letter's original fields as JSON text. */
const ESCAPED = "oncely:escaped";

/** `\u0000` or `\uD800`-`\uDFFF` escapes in JSON text that are not themselves escaped (`\\u0000` is text). */
const UNSTORABLE_ESCAPE = /(?<!\\)(?:\\\\)*\\u(?:0000|d[89a-f][0-9a-f]{2})/i;

/**
 * Whether JSON text produced by `JSON.stringify` holds only storable strings. `JSON.stringify`
 * writes NUL and unpaired surrogates as escapes (a paired surrogate stays raw), so an escape
 * is all there is to look for.
 */
export const isStorableJson = (jsonText: string): boolean =>
  !jsonText.includes("\\u") || !UNSTORABLE_ESCAPE.test(jsonText);

/**
 * Throws `TerminalStorageError` naming what the text is (`what`, and the `subject` it belongs to,
 * quoted) when a plain text field cannot be stored. The message is built only then: these run on
 * every field of every commit, where building a description per field cost more than the check.
 */
export function requireStorableText(text: string | null | undefined, what: string, subject?: string | null): void {
  const reason = typeof text === "string" ? unstorableReason(text) : undefined;
  if (reason) throw new TerminalStorageError(`cannot store ${describe(what, subject)}: ${reason}`);
}

/** Throws `TerminalStorageError` (see `requireStorableText`) when JSON text holds a string that cannot be stored. */
export function requireStorableJson(jsonText: string | null, what: string, subject?: string | null): void {
  if (jsonText !== null && !isStorableJson(jsonText)) {
    throw new TerminalStorageError(
      `cannot store ${describe(what, subject)}: it holds a string with NUL (U+0000) or an unpaired UTF-16 surrogate`,
    );
  }
}

const describe = (what: string, subject: string | null | undefined): string =>
  subject === undefined || subject === null ? what : `${what} "${escapeUnstorable(subject)}"`;

export interface DeadLetterText {
  messageId: string | null;
  /** JSON text of the payload. */
  payload: string;
  error: string;
  stack: string | null;
}

/**
 * The fields of a dead letter as the columns store them. `payloadValue` is the payload itself,
 * `payload` its JSON text. Unchanged when everything is storable (and the payload is not itself
 * an object carrying the wrapper's key, which would then be read as a wrapper).
 */
export function storableDeadLetter(d: DeadLetterText, payloadValue: unknown): DeadLetterText {
  const clean =
    (d.messageId === null || isStorableText(d.messageId)) &&
    isStorableText(d.error) &&
    (d.stack === null || isStorableText(d.stack)) &&
    isStorableJson(d.payload) &&
    !(payloadValue !== null && typeof payloadValue === "object" && Object.hasOwn(payloadValue, ESCAPED));
  if (clean) return d;
  const originals = `{"messageId":${JSON.stringify(d.messageId)},"payload":${d.payload},"error":${JSON.stringify(d.error)},"stack":${JSON.stringify(d.stack)}}`;
  return {
    messageId: d.messageId === null ? null : escapeUnstorable(d.messageId),
    payload: JSON.stringify({ [ESCAPED]: originals }),
    error: escapeUnstorable(d.error),
    stack: d.stack === null ? null : escapeUnstorable(d.stack),
  };
}

/** A dead letter as read from a store: the original fields back when they were escaped. */
export function restoreDeadLetter(record: DeadLetterRecord): DeadLetterRecord {
  const payload = record.payload as Record<string, unknown> | null;
  if (payload === null || typeof payload !== "object" || typeof payload[ESCAPED] !== "string") return record;
  const originals = JSON.parse(payload[ESCAPED]) as Pick<DeadLetterRecord, "messageId" | "payload" | "error" | "stack">;
  return { ...record, ...originals };
}

/**
 * Every part of an encoded commit except its dead letters' escaped fields must be storable.
 * Checked before any write, so a refused commit writes nothing on every back end.
 */
export function requireStorableCommit(c: EncodedCommit): void {
  requireStorableText(c.stream, "the stream name");
  for (const e of c.events) {
    requireStorableText(e.eventId, "an event id of stream", c.stream);
    requireStorableText(e.type, "the type of event", e.eventId);
    requireStorableText(e.causationId, "the causation id of event", e.eventId);
    requireStorableText(e.correlationId, "the correlation id of event", e.eventId);
    requireStorableJson(e.data, "the data of event", e.eventId);
  }
  if (c.snapshot) requireStorableJson(c.snapshot.state, "the snapshot state");
  for (const o of c.outbox) {
    requireStorableText(o.id, "an outbox row id");
    requireStorableText(o.kind, "the kind of outbox row", o.id);
    requireStorableText(o.stream, "the stream of outbox row", o.id);
    requireStorableJson(o.payload, "the payload of outbox row", o.id);
  }
  for (const d of c.outboxDone) {
    requireStorableText(d.id, "the id of a finished outbox row");
    requireStorableText(d.outcome, "the outcome of outbox row", d.id);
    requireStorableJson(d.result, "the result of outbox row", d.id);
  }
  if (c.inbox) {
    requireStorableText(c.inbox.consumer, "the inbox consumer");
    requireStorableText(c.inbox.messageId, "the inbox message id");
    requireStorableJson(c.inbox.reply, "the inbox reply");
  }
  for (const checkpoint of c.checkpoints) requireStorableSequencing(checkpoint);
  for (const p of c.park) {
    requireStorableSequencing(p);
    requireStorableJson(p.message, "the parked message at", `${p.source}@${p.version}`);
  }
  for (const p of c.unpark) requireStorableSequencing(p);
  for (const d of c.deadLetters) {
    requireStorableText(d.id, "a dead letter id");
    requireStorableText(d.consumer, "the consumer of dead letter", d.id);
  }
  for (const d of c.documents) {
    requireStorableText(d.collection, "a document collection");
    requireStorableText(d.id, "a document id of", d.collection);
    requireStorableJson(d.doc, "the document", `${d.collection}/${d.id}`);
  }
  for (const p of c.published) {
    requireStorableText(p.messageId, "a published message id");
    requireStorableText(p.subject, "the subject of published message", p.messageId);
    requireStorableText(p.body, "the body of published message", p.messageId);
  }
}

function requireStorableSequencing(p: { consumer: string; source: string }): void {
  requireStorableText(p.consumer, "a sequencing consumer name");
  requireStorableText(p.source, "a sequencing source");
}
