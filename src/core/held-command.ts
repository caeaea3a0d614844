import { createHash } from "node:crypto";
import { InvalidInputError, MessageConflictError } from "../base/errors.js";

/**
 * What an actor's inbox row keeps for a command sent with a message id: the reply it gave and a
 * hash of the command, so that the same id again is compared, not just matched. Same hash: a
 * duplicate, answered with the stored reply. Other hash: `MessageConflictError`, never a silent
 * duplicate. Held in the inbox row's `reply` JSON (no schema change). Rows written before hashes
 * were kept hold the bare reply and cannot be compared: such a repeat stays a duplicate.
 * Routed outcomes (effect and delivery outcomes, fired timers) are not hashed: their ids are
 * derived from the key and the first final outcome of a key wins, whatever a later one says.
 */
const HASH_FIELD = "oncely.commandHash";
const SHA256_HEX = /^[0-9a-f]{64}$/;

export interface HeldCommand {
  readonly [HASH_FIELD]: string;
  readonly reply: unknown;
}

/** Object keys sorted at every level; values as `JSON.stringify` sees them (after `toJSON`). */
function sortedKeys(_key: string, value: unknown): unknown {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return value;
  // A null prototype: a "__proto__" key is then an ordinary property, kept as JSON.parse keeps it.
  const sorted: Record<string, unknown> = Object.create(null);
  for (const key of Object.keys(value).sort()) sorted[key] = (value as Record<string, unknown>)[key];
  return sorted;
}

/**
 * sha256 (hex) of the command's canonical JSON: its JSON form with keys sorted, so a command
 * handed over in memory and the same command read back from the outbox (a redelivered message)
 * hash alike, whatever their key order or `undefined` fields.
 */
export function commandHash(command: unknown, messageId: string): string {
  let json: string | undefined;
  try {
    json = JSON.stringify(command, sortedKeys);
  } catch (error) {
    throw new InvalidInputError(`command sent with message id "${messageId}" is not JSON`, [
      `command: ${error instanceof Error ? error.message : String(error)}`,
    ]);
  }
  return createHash("sha256")
    .update(json ?? "null")
    .digest("hex");
}

export const heldCommand = (hash: string, reply: unknown): HeldCommand => ({ [HASH_FIELD]: hash, reply });

/** The hash and reply an inbox row holds; no hash for a row written before hashes were kept (or by an outcome). */
export function readHeld(stored: unknown): { hash: string | undefined; reply: unknown } {
  if (stored !== null && typeof stored === "object" && !Array.isArray(stored)) {
    const record = stored as Record<string, unknown>;
    const hash = record[HASH_FIELD];
    const keys = Object.keys(record);
    if (typeof hash === "string" && SHA256_HEX.test(hash) && keys.length === 2 && "reply" in record) {
      return { hash, reply: record.reply };
    }
  }
  return { hash: undefined, reply: stored };
}

/** Throws when `address` handled `messageId` with another command than the one hashed `hash`. */
export function requireSameCommand(address: string, messageId: string, held: string | undefined, hash: string): void {
  if (held === undefined || held === hash) return;
  throw new MessageConflictError(
    `actor "${address}": message id "${messageId}" was already handled with another command; ` +
      "a message id names one command: send a different command under a new id",
    "payload",
    { address, messageId, hash: held },
  );
}
