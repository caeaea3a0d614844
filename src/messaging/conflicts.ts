import { requestHash } from "../base/canonical-json.js";
import { MessageConflictError, UnhandledEventError } from "../base/errors.js";
import { UpcastError, VersionTooNewError } from "../core/upcast.js";
import type { InboxRecord } from "../journal/types.js";
import type { Envelope } from "./envelope.js";
import { AuthenticityError } from "./signing.js";

/**
 * Conflicts are never silent. A consumer's inbox row holds the canonical hash of the message it
 * handled (and the message, for the record), so a later copy is compared, not just matched by id:
 *
 * - same `eventId`, same content: an exact duplicate, a silent no-op;
 * - same `eventId`, other content: a `payload` conflict, dead-lettered with reason `conflict`
 *   holding both messages, counted in `oncely_consumer_conflicts_total`;
 * - sequenced: another `eventId` at a version already applied or parked: a `version` conflict.
 *
 * Inbox rows written before hashes were stored (reply `null`) cannot be compared: such a copy
 * counts as a duplicate. A copy arriving after its inbox row was pruned (see inbox retention)
 * is seen as new in facts mode and as a version conflict in sequenced mode.
 */

/** The inbox reply a consumer stores for a handled message. */
export interface HeldMessage {
  hash: string;
  envelope: Envelope;
}

/**
 * sha256 of the canonical JSON of what makes the event: every envelope field the producer chose.
 * Fields a transport or signer adds (signatures, key ids) are left out: a copy re-signed with
 * another key is still the same event.
 */
export const messageHash = (e: Envelope): string =>
  requestHash({
    eventId: e.eventId,
    type: e.type,
    source: e.source,
    aggregateId: e.aggregateId,
    aggregateVersion: e.aggregateVersion ?? null,
    // Only when not 1: the hash of an envelope from before versions existed stays what was stored.
    ...(e.schemaVersion === undefined || e.schemaVersion === 1 ? {} : { schemaVersion: e.schemaVersion }),
    occurredAt: e.occurredAt,
    correlationId: e.correlationId,
    causationId: e.causationId,
    payload: e.payload,
  });

export const heldMessage = (envelope: Envelope): HeldMessage => ({ hash: messageHash(envelope), envelope });

const isHeld = (reply: unknown): reply is HeldMessage =>
  reply !== null && typeof reply === "object" && typeof (reply as { hash?: unknown }).hash === "string";

/** Throws a `payload` conflict when the inbox holds this eventId with other content. */
export function requireSameMessage(consumer: string, envelope: Envelope, held: InboxRecord): void {
  if (!isHeld(held.reply) || held.reply.hash === messageHash(envelope)) return;
  throw new MessageConflictError(
    `consumer "${consumer}": event "${envelope.eventId}" was already handled with other content`,
    "payload",
    held.reply,
  );
}

/** A `version` conflict: `envelope` claims a version of its stream that another event holds. */
export function versionConflict(
  consumer: string,
  envelope: Envelope,
  source: string,
  held: { state: "taken (applied, or skipped past)" | "parked"; eventId?: string; envelope?: unknown },
): MessageConflictError {
  const by = held.eventId === undefined ? "another event" : `event "${held.eventId}"`;
  return new MessageConflictError(
    `consumer "${consumer}": event "${envelope.eventId}" claims version ${envelope.aggregateVersion} of ${source}, already ${held.state} from ${by}`,
    "version",
    held,
  );
}

/** Why a message became a dead letter, stored with it (`DeadLetterPayload.reason`). */
export type DeadLetterReason = "invalid" | "unauthentic" | "conflict" | "unhandled" | "unreadable-version" | "failed";

export function deadLetterReason(error: unknown, parsed: boolean): DeadLetterReason {
  if (error instanceof AuthenticityError) return "unauthentic";
  if (error instanceof MessageConflictError) return "conflict";
  if (error instanceof UnhandledEventError) return "unhandled";
  if (error instanceof UpcastError || error instanceof VersionTooNewError) return "unreadable-version";
  return parsed ? "failed" : "invalid";
}
