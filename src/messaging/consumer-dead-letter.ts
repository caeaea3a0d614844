import { MessageConflictError, toError } from "../base/errors.js";
import { storableId } from "../base/storable-text.js";
import type { Commit } from "../journal/types.js";
import { deadLetterReason, messageHash } from "./conflicts.js";
import type { ConsumerContext } from "./consumer-context.js";
import type { Envelope } from "./envelope.js";
import type { Delivery } from "./transport.js";

/** The message as it came (or, for a released parked version, as it was parked). */
export type DeadLetterMessage = Pick<Delivery, "body" | "messageId"> & { subject: string | null };

/**
 * Store a message's dead letter, with the reason, error, attempts and first failure, then count
 * and log it; `unpark` (a released parked version) goes in the same commit. Throws if the commit
 * fails: the caller decides whether the message comes back (see `DeliveryPath.deadLetterOrRetry`).
 */
export async function writeDeadLetter(
  c: ConsumerContext,
  delivery: DeadLetterMessage,
  envelope: Envelope | undefined,
  thrown: unknown,
  attempts: number,
  fixedId?: string,
  unpark?: Commit["unpark"],
): Promise<void> {
  const error = toError(thrown);
  const now = c.clock.now();
  const messageId = envelope?.eventId ?? delivery.messageId ?? null;
  const reason = deadLetterReason(thrown, envelope !== undefined);
  const conflict = thrown instanceof MessageConflictError ? thrown : undefined;
  // Deterministic id for a known message: a redelivery after a crash between this commit and
  // the ack writes the same dead letter again, which the journal ignores. A conflict gets its
  // own id (per content), as the eventId may already have a dead letter of its own; so does a
  // message refused as unauthentic (`fixedId`, from its body).
  // Ids are derived storably: the message id may hold any text (the journal keeps it as it is).
  const known = messageId === null ? c.ids.next() : storableId(messageId);
  const suffix = conflict && envelope ? `|conflict|${messageHash(envelope).slice(0, 16)}` : "";
  const id = fixedId ?? `${c.name}|${known}${suffix}`;
  await c.journal.commit({
    deadLetters: [
      {
        id,
        consumer: c.name,
        messageId,
        payload: {
          subject: delivery.subject,
          body: delivery.body,
          envelope: envelope ?? null,
          reason,
          ...(conflict ? { conflict: { kind: conflict.kind, held: conflict.held } } : {}),
        },
        error: error.message,
        stack: error.stack ?? null,
        attempts,
        firstFailedAt: (messageId && c.firstFailure.get(messageId)?.at) || now,
        lastFailedAt: now,
      },
    ],
    unpark,
    now,
  });
  c.counts.deadLetters.inc();
  if (conflict) c.counts.conflicts.onLabels(c.metrics.conflicts, { consumer: c.name, kind: conflict.kind });
  c.metrics.handled.inc({ consumer: c.name, outcome: "dead" });
  c.logger.error(
    { consumer: c.name, messageId, subject: delivery.subject, attempts, reason, err: error },
    "message dead-lettered",
  );
}
