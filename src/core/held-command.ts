import { createHash } from "node:crypto";
import { InvalidInputError, MessageConflictError } from "../base/errors.js";

/**
 * What an actor's inbox row keeps for a command sent with a message id: the reply it gave and a
 * print of the command, so that the same id again is compared, not just matched. Kept in the
 * inbox row's `reply` JSON (no schema change).
 *
 * - Same content: a duplicate, answered with the stored reply.
 * - Another command type, or the same shape (fields at every depth, JSON types of their values)
 *   with other values: `MessageConflictError`, never a silent duplicate. This is the client that
 *   reuses an idempotency key for another body, the webhook that reuses an event id.
 * - The same type in another shape: taken as the same request, answered as a duplicate. A release
 *   that renames or adds a command's fields parses a client's retry, sent across the upgrade under
 *   the same id, into the new shape; only the actor's code could tell the two apart. (So a repeat
 *   that differs by an optional field present in one copy only is not caught either.)
 *
 * Rows written before prints were kept hold the bare reply and cannot be compared: such a repeat
 * stays a duplicate. Routed outcomes (effect and delivery outcomes, fired timers) are not printed:
 * their ids are derived from the key, and the first final outcome of a key wins.
 */
const FIELD = "oncely.command";

/** The print of a command: its type, a hash of its shape and a hash of its content. */
export interface CommandPrint {
  type: string;
  shape: string;
  hash: string;
}

export interface HeldCommand {
  readonly [FIELD]: CommandPrint;
  readonly reply: unknown;
}

const sha256 = (text: string): string => createHash("sha256").update(text).digest("hex");

/** Object keys sorted at every level; values as `JSON.stringify` sees them (after `toJSON`). */
function sortedKeys(_key: string, value: unknown): unknown {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return value;
  // A null prototype: a "__proto__" key is then an ordinary property, kept as JSON.parse keeps it.
  const sorted: Record<string, unknown> = Object.create(null);
  for (const key of Object.keys(value).sort()) sorted[key] = (value as Record<string, unknown>)[key];
  return sorted;
}

/** Every `path:type` of a JSON value, array positions merged (`lines[].sku:string`). */
function shapeOf(value: unknown, path: string, into: Set<string>): void {
  if (Array.isArray(value)) {
    into.add(`${path}:array`);
    for (const item of value) shapeOf(item, `${path}[]`, into);
  } else if (value !== null && typeof value === "object") {
    into.add(`${path}:object`);
    const record = value as Record<string, unknown>;
    for (const key of Object.keys(record)) shapeOf(record[key], `${path}.${JSON.stringify(key)}`, into);
  } else {
    into.add(`${path}:${value === null ? "null" : typeof value}`);
  }
}

/**
 * The print of a command, from its JSON form with keys sorted, so that a command handed over in
 * memory and the same command read back from the outbox (a redelivered message) print alike,
 * whatever their key order, `undefined` fields or `Date` values.
 */
export function commandPrint(command: { type: string }, messageId: string): CommandPrint {
  let json: string | undefined;
  try {
    json = JSON.stringify(command, sortedKeys);
  } catch (error) {
    throw new InvalidInputError(`command sent with message id "${messageId}" is not JSON`, [
      `command: ${error instanceof Error ? error.message : String(error)}`,
    ]);
  }
  const paths = new Set<string>();
  shapeOf(JSON.parse(json ?? "null"), "", paths);
  return { type: command.type, shape: sha256([...paths].sort().join("\n")).slice(0, 16), hash: sha256(json ?? "null") };
}

export const heldCommand = (print: CommandPrint, reply: unknown): HeldCommand => ({ [FIELD]: print, reply });

const isPrint = (value: unknown): value is CommandPrint =>
  value !== null &&
  typeof value === "object" &&
  typeof (value as CommandPrint).type === "string" &&
  typeof (value as CommandPrint).shape === "string" &&
  typeof (value as CommandPrint).hash === "string";

/** The print and reply an inbox row holds; no print for a row written before prints were kept (or by an outcome). */
export function readHeld(stored: unknown): { print: CommandPrint | undefined; reply: unknown } {
  if (stored !== null && typeof stored === "object" && !Array.isArray(stored)) {
    const record = stored as Record<string, unknown>;
    const print = record[FIELD];
    if (isPrint(print) && "reply" in record && Object.keys(record).length === 2) return { print, reply: record.reply };
  }
  return { print: undefined, reply: stored };
}

/** Throws when `address` handled `messageId` with a command that conflicts with `next` (see above). */
export function requireSameCommand(
  address: string,
  messageId: string,
  held: CommandPrint | undefined,
  next: CommandPrint,
): void {
  if (held === undefined || held.hash === next.hash) return;
  if (held.type === next.type && held.shape !== next.shape) return;
  const what = held.type === next.type ? "another command" : `a command of type "${held.type}"`;
  throw new MessageConflictError(
    `actor "${address}": message id "${messageId}" was already handled with ${what}; ` +
      "a message id names one command: send a different command under a new id",
    "payload",
    { address, messageId, command: held },
  );
}
