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

/** Throws `TerminalStorageError` naming `where` when a plain text field cannot be stored. */
export function requireStorableText(where: string, text: string | null | undefined): void {
  const reason = typeof text === "string" ? unstorableReason(text) : undefined;
  if (reason) throw new TerminalStorageError(`cannot store ${where}: ${reason}`);
}

/** Throws `TerminalStorageError` naming `where` when JSON text holds a string that cannot be stored. */
export function requireStorableJson(where: string, jsonText: string | null): void {
  if (jsonText !== null && !isStorableJson(jsonText)) {
    throw new TerminalStorageError(
      `cannot store ${where}: it holds a string with NUL (U+0000) or an unpaired UTF-16 surrogate`,
    );
  }
}

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
  requireStorableText("the stream name", c.stream);
  for (const e of c.events) {
    requireStorableText(`an event id of stream "${escapeUnstorable(c.stream ?? "")}"`, e.eventId);
    requireStorableText(`the type of event "${e.eventId}"`, e.type);
    requireStorableText(`the causation id of event "${e.eventId}"`, e.causationId);
    requireStorableText(`the correlation id of event "${e.eventId}"`, e.correlationId);
    requireStorableJson(`the data of event "${e.eventId}"`, e.data);
  }
  if (c.snapshot) requireStorableJson("the snapshot state", c.snapshot.state);
  for (const o of c.outbox) {
    requireStorableText("an outbox row id", o.id);
    requireStorableText(`the kind of outbox row "${o.id}"`, o.kind);
    requireStorableText(`the stream of outbox row "${o.id}"`, o.stream);
    requireStorableJson(`the payload of outbox row "${o.id}"`, o.payload);
  }
  for (const d of c.outboxDone) {
    requireStorableText("the id of a finished outbox row", d.id);
    requireStorableText(`the outcome of outbox row "${d.id}"`, d.outcome);
    requireStorableJson(`the result of outbox row "${d.id}"`, d.result);
  }
  if (c.inbox) {
    requireStorableText("the inbox consumer", c.inbox.consumer);
    requireStorableText("the inbox message id", c.inbox.messageId);
    requireStorableJson("the inbox reply", c.inbox.reply);
  }
  for (const p of [...(c.checkpoint ? [c.checkpoint] : []), ...c.park, ...c.unpark]) {
    requireStorableText("a sequencing consumer name", p.consumer);
    requireStorableText("a sequencing source", p.source);
  }
  for (const p of c.park) requireStorableJson(`the parked message at ${p.source}@${p.version}`, p.message);
  for (const d of c.deadLetters) {
    requireStorableText("a dead letter id", d.id);
    requireStorableText(`the consumer of dead letter "${d.id}"`, d.consumer);
  }
  for (const d of c.documents) {
    requireStorableText("a document collection", d.collection);
    requireStorableText(`a document id of "${d.collection}"`, d.id);
    requireStorableJson(`the document "${d.collection}/${d.id}"`, d.doc);
  }
}
