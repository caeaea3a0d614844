import { isRetryable, MessageConflictError, ReleaseFailedError, StorageUnavailableError } from "../base/errors.js";
import { VersionTooNewError } from "../core/upcast.js";
import { CollectionOwnedError } from "./collection-owners.js";
import type { ConsumerContext } from "./consumer-context.js";
import { writeDeadLetter } from "./consumer-dead-letter.js";
import type { HandOverIntake } from "./consumer-hand-over.js";
import { decodeEnvelope, type Envelope } from "./envelope.js";
import type { HandleResult } from "./handlers.js";
import { AuthenticityError, bodyFingerprint } from "./signing.js";
import { backoffMs, type Delivery, type DeliveryOutcome } from "./transport.js";

/**
 * The transport-facing path of a consumer: from a delivery's body to its settlement (ack, nak with
 * a delay, or term). Decodes and verifies the message, hands it to the consumer's handling, and
 * turns what that throws into a retry, a deferral to a newer worker or a dead letter. Holds the
 * eventIds it has deferred (warned about once each).
 */
export class DeliveryPath {
  /** EventIds deferred by this process (warned about once each); bounded, oldest forgotten first. */
  private readonly deferred = new Set<string>();

  constructor(
    private readonly c: ConsumerContext,
    /** The consumer's handling of an envelope, as `Consumer.handle`: resolves once committed. */
    private readonly handle: (envelope: Envelope) => Promise<HandleResult>,
    private readonly handOvers: HandOverIntake,
  ) {}

  /**
   * Never throws for a bad message: unparseable bodies and terminal errors are dead-lettered at
   * once, retryable failures are nak'ed with backoff until the last delivery, which is
   * dead-lettered; only then is the message acknowledged. A message this code cannot read yet is
   * deferred to a newer worker (`defer`), never dead-lettered for it.
   * If writing the dead letter itself fails, the error propagates and the transport redelivers.
   */
  async deliver(delivery: Delivery): Promise<DeliveryOutcome> {
    const c = this.c;
    // The durable copy of an event this process handed over: settled by that handling.
    const handedOver = this.handOvers.take(delivery);
    if (handedOver && (await handedOver)) {
      c.counts.copiesSettled.inc();
      return { kind: "ack" };
    }
    let envelope: Envelope;
    try {
      envelope = decodeEnvelope(delivery.body);
    } catch (error) {
      return this.deadLetterOrRetry(delivery, undefined, error);
    }
    const refused = this.refusal(envelope, delivery.subject);
    if (refused) return this.reject(delivery, envelope, refused);
    try {
      await this.handle(envelope);
      c.firstFailure.delete(envelope.eventId);
      this.deferred.delete(envelope.eventId);
      return { kind: "ack" };
    } catch (error) {
      if (error instanceof VersionTooNewError) return this.defer(delivery, envelope, error);
      if (error instanceof ReleaseFailedError) return this.retryRelease(delivery, error);
      const first = c.firstFailure.get(envelope.eventId) ?? { at: c.clock.now(), attempt: delivery.attempt };
      c.firstFailure.set(envelope.eventId, first);
      // The journal being unreachable, or the collection held by another writer (an operator's
      // matter, see `collection-owners.ts`), says nothing about the message: never a reason to give up on it.
      // Nor is a command that could not reach its actor's owner (a slice moving between workers, an
      // owner cut off until its lease lapses): the owner is the matter, and it settles within a lease.
      const outage =
        error instanceof StorageUnavailableError || error instanceof CollectionOwnedError || isRoutingError(error);
      // Deliveries before this process first failed on it (another instance's, or an older
      // release's deferrals: the broker counts those too) are not this message's failures here.
      const failures = delivery.attempt - first.attempt + 1;
      const last = failures >= Math.min(delivery.maxDeliveries, c.maxDeliveries);
      if (!outage && (!isRetryable(error) || last)) return this.deadLetterOrRetry(delivery, envelope, error);
      c.metrics.handled.inc({ consumer: c.name, outcome: "retry" });
      c.logger.warn(
        { consumer: c.name, eventId: envelope.eventId, attempt: delivery.attempt, err: error },
        "handler failed; will retry",
      );
      return { kind: "nak", delayMs: backoffMs(failures, c.retryBaseMs, c.retryMaxMs) };
    }
  }

  /** Decode, verify and handle a stored body (dead-letter replay): the same path as a delivery, errors thrown. */
  replayBody(body: string, subject?: string): Promise<HandleResult> {
    const envelope = decodeEnvelope(body);
    const refused = this.refusal(envelope, subject);
    return refused ? Promise.reject(refused) : this.handle(envelope);
  }

  /**
   * This message was applied; a version it released failed and will be tried again. Its redelivery
   * (a duplicate) releases again, with the transport's backoff. On its last delivery it is acked:
   * the released version keeps its own count and the gap check releases it from then on.
   */
  private retryRelease(delivery: Delivery, error: ReleaseFailedError): DeliveryOutcome {
    const c = this.c;
    if (delivery.attempt >= Math.min(delivery.maxDeliveries, c.maxDeliveries)) {
      c.logger.warn(
        { consumer: c.name, source: error.source, version: error.version, err: error },
        "released version still failing; the gap check will release it again",
      );
      return { kind: "ack" };
    }
    return { kind: "nak", delayMs: backoffMs(delivery.attempt, c.retryBaseMs, c.retryMaxMs) };
  }

  /**
   * A message written by newer code than this (or for an actor newer code wrote to): not this
   * worker's to handle, and nothing wrong with it. Nak'ed with a long, capped delay so that a newer
   * worker takes a redelivery (on NATS the workers share the durable; on the journal transport each
   * process reads the log), logged at warn once per message and counted on every deferral, so
   * that work waiting for an upgrade that never comes is seen. Never dead-lettered for this: in
   * sequenced mode its version stays unconsumed and what follows parks behind it, as for any gap.
   * A copy another instance has handled meanwhile (its inbox row is there) is acknowledged as a
   * duplicate, so an older worker reading the journal log does not hold its position behind it.
   */
  private async defer(delivery: Delivery, envelope: Envelope, error: VersionTooNewError): Promise<DeliveryOutcome> {
    const c = this.c;
    try {
      if (await c.alreadyHandled(envelope)) {
        this.deferred.delete(envelope.eventId);
        c.count({ outcome: "duplicate", released: 0 });
        return { kind: "ack" };
      }
    } catch (inboxError) {
      if (inboxError instanceof MessageConflictError) return this.deadLetterOrRetry(delivery, envelope, inboxError);
      // The inbox could not be read (journal unreachable): the message is deferred all the same.
    }
    const delayMs = backoffMs(delivery.attempt, c.deferBaseMs, c.deferMaxMs);
    c.metrics.deferred.inc({ consumer: c.name, reason: "version-too-new" });
    if (!this.deferred.has(envelope.eventId)) {
      if (this.deferred.size >= 10_000) this.deferred.delete(this.deferred.values().next().value as string);
      this.deferred.add(envelope.eventId);
      c.logger.warn(
        {
          consumer: c.name,
          eventId: envelope.eventId,
          type: envelope.type,
          subject: delivery.subject,
          attempt: delivery.attempt,
          delayMs,
          err: error,
        },
        "message written by a newer release than this worker's; left for a newer worker, not dead-lettered",
      );
    }
    return { kind: "nak", delayMs };
  }

  /**
   * Dead-letter a message and ack it. If the dead letter cannot be written (the journal is down),
   * nak instead: the transports never drop a message, so it comes back and is dead-lettered then.
   */
  private async deadLetterOrRetry(
    delivery: Delivery,
    envelope: Envelope | undefined,
    error: unknown,
    id?: string,
  ): Promise<DeliveryOutcome> {
    const c = this.c;
    try {
      await writeDeadLetter(c, delivery, envelope, error, delivery.attempt, id);
    } catch (writeError) {
      c.logger.warn(
        { consumer: c.name, attempt: delivery.attempt, err: writeError },
        "could not store the dead letter; the message will come back",
      );
      return { kind: "nak", delayMs: backoffMs(delivery.attempt, c.retryBaseMs, c.retryMaxMs) };
    }
    if (envelope) {
      c.firstFailure.delete(envelope.eventId);
      this.deferred.delete(envelope.eventId);
    }
    return { kind: "ack" };
  }

  /** Why the verifier refuses this envelope, if it does (other errors of the verifier propagate). */
  private refusal(envelope: Envelope, subject: string | undefined): AuthenticityError | undefined {
    try {
      this.c.verifier?.verify(envelope, subject);
      return undefined;
    } catch (error) {
      if (error instanceof AuthenticityError) return error;
      throw error;
    }
  }

  /**
   * Dead-letter an unverified message under an id of its own body (a forgery reusing a real
   * eventId must not take the dead-letter slot of that event) and settle it with `term`: it was
   * not handled. Counted once it is stored; if storing fails it comes back and is refused again.
   */
  private async reject(delivery: Delivery, envelope: Envelope, refused: AuthenticityError): Promise<DeliveryOutcome> {
    const id = `${this.c.name}|rejected|${bodyFingerprint(delivery.body)}`;
    const outcome = await this.deadLetterOrRetry(delivery, envelope, refused, id);
    if (outcome.kind === "nak") return outcome;
    this.c.metrics.rejected.inc({ consumer: this.c.name, reason: refused.reason });
    return { kind: "term", reason: refused.message };
  }
}

/**
 * A command that did not reach its actor's owner: refused by a worker that no longer owns the
 * slice (`NotOwnerError`), fenced out mid-commit (`FencedOutError`), or forwarded without a reply in
 * time (`ForwardTimeoutError`, from `src/ownership/router.ts`, named here to keep messaging free
 * of the router). Matched by name: each is a `RetryableError`.
 */
const ROUTING_ERRORS = new Set(["NotOwnerError", "FencedOutError", "ForwardTimeoutError"]);
const isRoutingError = (error: unknown): boolean => error instanceof Error && ROUTING_ERRORS.has(error.name);
