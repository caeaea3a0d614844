import type { Registry } from "prom-client";
import { MESSAGING_DEFAULTS } from "../base/defaults.js";
import {
  CheckpointConflictError,
  DuplicateMessageError,
  InvalidInputError,
  isRetryable,
  MessageConflictError,
  NotRegisteredError,
  ReleaseFailedError,
  RetriesExhaustedError,
  StorageUnavailableError,
  toError,
} from "../base/errors.js";
import { storableId } from "../base/storable-text.js";
import type { Clock, IdGenerator } from "../core/clock.js";
import type { Typed } from "../core/decider.js";
import { resolveEnvironment } from "../core/environment.js";
import type { Faults } from "../core/faults.js";
import type { Logger } from "../core/logger.js";
import { Mailboxes } from "../core/mailbox.js";
import type { Runtime, SendOptions } from "../core/runtime.js";
import { type Schemas, VersionTooNewError } from "../core/upcast.js";
import type {
  CheckpointWrite,
  Commit,
  ConsumerStateReader,
  DocumentReader,
  EventStore,
  InboxReader,
} from "../journal/types.js";
import { consumeSpan } from "../observability/messaging-spans.js";
import { CollectionOwnedError, claimCollection } from "./collection-owners.js";
import { deadLetterReason, heldMessage, messageHash, requireSameMessage, versionConflict } from "./conflicts.js";
import { type ConsumerCounts, type ConsumerStats, consumerCounts, consumerStatsOf } from "./consumer-counts.js";
import { decodeEnvelope, type Envelope, encodeEnvelope, parseEnvelope } from "./envelope.js";
import { commitGapSkip } from "./gap-skip.js";
import { type GapAlert, GapMonitor, type ReconcileHook } from "./gaps.js";
import { type DurableCopy, HAND_OVER_CONCURRENCY, HandedOverCopies, type HandOverTarget } from "./handed-over.js";
import type { ConsumerHandler, HandleResult, ProjectTools } from "./handlers.js";
import { type MessagingMetrics, messagingMetrics } from "./metrics.js";
import { AuthenticityError, bodyFingerprint, type Verifier } from "./signing.js";
import {
  backoffMs,
  type Delivery,
  type DeliveryOutcome,
  type SubscribeOptions,
  type Subscription,
  type Transport,
} from "./transport.js";
import { upcastingHandler } from "./upcast-handler.js";

export type OrderingMode = "facts" | "sequenced";

/**
 * What a consumer uses of the journal: its inbox, checkpoints and parked messages, the documents
 * its projection and gap alerts keep, and the commit that records each message.
 */
export type ConsumerJournal = Pick<EventStore, "commit"> & InboxReader & ConsumerStateReader & DocumentReader;
/** A router's send (`CommandRouter.send`), as the consumer calls it. */
type CommandRouterSend = (
  address: string,
  command: Typed,
  options?: SendOptions,
) => Promise<{ reply: unknown; duplicate: boolean }>;

export interface ConsumerOptions {
  /** Durable name: the inbox, checkpoints, parked messages and dead letters are recorded under it. */
  name: string;
  journal: ConsumerJournal;
  handler: ConsumerHandler;
  /** `facts` (default): any order, monotonic updates. `sequenced`: per source stream, in aggregateVersion order. */
  mode?: OrderingMode;
  /** Needed by command handlers (and process managers). */
  runtime?: Runtime;
  /**
   * Where a command handler's commands go instead of `runtime` (a `CommandRouter`, which sends each
   * to the worker owning its actor). Absent: `runtime`.
   */
  commands?: { send: Runtime["send"] | CommandRouterSend };
  /** Event types this consumer handles; others are acknowledged untouched. Default: all. */
  types?: readonly string[];
  clock?: Clock;
  ids?: IdGenerator;
  faults?: Faults;
  logger?: Logger;
  metrics?: MessagingMetrics;
  /** Where the consumer's metrics are registered when `metrics` is not given; a private registry by default. */
  registry?: Registry;
  /**
   * Deliveries before a failing message is dead-lettered (default 5). Terminal errors go at once.
   * Counted from the first delivery of the message that failed in this process, so deliveries
   * spent elsewhere before it (deferred by an older release, see `deferBaseMs`) take nothing from it.
   */
  maxDeliveries?: number;
  retryBaseMs?: number;
  retryMaxMs?: number;
  /**
   * A message this code cannot read yet (`VersionTooNewError`: a payload written by a newer
   * release, or a command for an actor whose stream a newer release wrote) is left for a newer
   * worker: nak'ed after `deferBaseMs` (default 1 s), doubling per delivery up to `deferMaxMs`
   * (default 30 s). Never dead-lettered for that and never counted against `maxDeliveries`; logged
   * at warn once per message and counted in `oncely_consumer_deferred_total`. The cap is how long
   * a redelivery that lands on an older worker again delays the message (a NATS durable hands it to
   * whichever worker pulls), and on NATS a deferred message holds one of `max_ack_pending` meanwhile.
   */
  deferBaseMs?: number;
  deferMaxMs?: number;
  /** Sequenced: how long a gap may stay open before it is alerted on (default 60 s, clock time). */
  gapTimeoutMs?: number;
  /** Sequenced: called once per alerted gap. */
  reconcile?: ReconcileHook;
  /** Attempts after optimistic-concurrency conflicts with another instance (default 10). */
  maxConflictRetries?: number;
  /**
   * When set, every delivered (and replayed) message must verify (signed by a key accepted for its
   * source, on a subject of that source) before anything else happens; one that does not is
   * dead-lettered with the reason and settled with `term`, never handled.
   */
  verifier?: Verifier | undefined;
  /**
   * Payload schemas per event type (see `core/upcast.ts`): an envelope at an older `schemaVersion`
   * is upcast before the handler sees it; one with no path is dead-lettered (`unreadable-version`),
   * one newer than declared is left for a newer worker (see `deferBaseMs`).
   */
  upcast?: Schemas;
  /** @internal Set by `rebuildProjection`, which holds the collection while it rebuilds it. */
  rebuilding?: boolean;
}

/** The producer stream a sequenced message belongs to: one checkpoint each. */
export const sourceStreamOf = (envelope: Envelope): string => `${envelope.source}/${envelope.aggregateId}`;

/**
 * Consumes integration events: dedups through the inbox in the same commit as the update, in one
 * of two ordering modes, and dead-letters what cannot be handled without ever blocking the rest.
 *
 * Facts mode: each event is applied when it arrives; the handler's updates must be monotonic and
 * commutative. A document is read, projected and written with an optimistic guard (a checkpoint
 * `(<name>#doc, <collection>/<id>)` used as the document's revision), so two instances of one
 * consumer never lose an update.
 *
 * Sequenced mode: a checkpoint per producer stream (`source/aggregateId`). A copy of a handled
 * event is a duplicate; one past a gap is parked in the journal; the next expected version is applied
 * together with the checkpoint advance and its unpark, then parked successors are released in
 * order. Gaps are watched by `checkGaps` (alert once + reconciliation hook, never silent).
 *
 * Conflicts are never silent (see `./conflicts.ts`): the same eventId with other content, or another
 * eventId at a version already taken or parked, is dead-lettered with reason `conflict` and counted;
 * a sequenced event the handler has no key/route for is dead-lettered (`unhandled`) without taking
 * its version.
 *
 * Failure windows: a command handler sends to the actor (deduplicated by the actor's inbox) and
 * then commits the consumer's inbox/checkpoint; a crash between the two makes the redelivery
 * reach the actor again, which answers from its inbox. A projection commits everything at once.
 */
export class Consumer implements HandOverTarget {
  readonly name: string;
  readonly mode: OrderingMode;
  readonly journal: ConsumerJournal;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly metrics: MessagingMetrics;
  private readonly handler: ConsumerHandler;
  private readonly runtime: Runtime | undefined;
  private readonly commands: ConsumerOptions["commands"];
  private readonly types: ReadonlySet<string> | undefined;
  private readonly ids: IdGenerator;
  private readonly faults: Faults;
  private readonly maxDeliveries: number;
  private readonly retryBaseMs: number;
  private readonly retryMaxMs: number;
  private readonly maxConflictRetries: number;
  private readonly verifier: Verifier | undefined;
  private readonly locks = new Mailboxes();
  private readonly deferBaseMs: number;
  private readonly deferMaxMs: number;
  /** Per eventId, the first failure of it in this process: when, and at which delivery. */
  private readonly firstFailure = new Map<string, { at: number; attempt: number }>();
  /** EventIds deferred by this process (warned about once each); bounded, oldest forgotten first. */
  private readonly deferred = new Set<string>();
  private readonly rebuilding: boolean;
  /** This consumer's claim on its projection's collection, made once (see `collection-owners.ts`). */
  private ownership: Promise<void> | undefined;
  /** Failed attempts of parked versions being released, by eventId (see `releaseParked`). */
  private readonly releaseFailures = new Map<string, number>();
  /** Events handed over at commit whose durable copy has not arrived yet (see `handOver`). */
  private readonly handedOver = new HandedOverCopies();
  /** Handed-over events being handled now (at most `HAND_OVER_CONCURRENCY`). */
  private handingOver = 0;
  readonly gaps: GapMonitor;
  /** This consumer's counts, each moved with its series (see `ConsumerCounts`). */
  private readonly counts: ConsumerCounts;

  constructor(options: ConsumerOptions) {
    this.name = options.name;
    this.mode = options.mode ?? "facts";
    this.journal = options.journal;
    this.handler = upcastingHandler(options.name, options.handler, options.upcast);
    this.runtime = options.runtime;
    this.commands = options.commands;
    this.types = options.types ? new Set(options.types) : undefined;
    const env = resolveEnvironment(options);
    this.clock = env.clock;
    this.ids = env.ids;
    this.faults = env.faults;
    this.logger = env.logger;
    this.metrics = options.metrics ?? messagingMetrics(env.registry);
    this.counts = consumerCounts(this.metrics, this.name);
    this.maxDeliveries = options.maxDeliveries ?? MESSAGING_DEFAULTS.maxDeliveries;
    this.retryBaseMs = options.retryBaseMs ?? MESSAGING_DEFAULTS.retryBaseMs;
    this.retryMaxMs = options.retryMaxMs ?? MESSAGING_DEFAULTS.retryMaxMs;
    this.deferBaseMs = options.deferBaseMs ?? MESSAGING_DEFAULTS.deferBaseMs;
    this.deferMaxMs = options.deferMaxMs ?? MESSAGING_DEFAULTS.deferMaxMs;
    this.maxConflictRetries = options.maxConflictRetries ?? MESSAGING_DEFAULTS.consumerConflictRetries;
    this.verifier = options.verifier;
    this.rebuilding = options.rebuilding ?? false;
    if (this.handler.kind === "command" && !this.runtime) {
      throw new NotRegisteredError(`consumer "${this.name}" routes commands but was given no runtime`);
    }
    this.gaps = new GapMonitor(this, {
      timeoutMs: options.gapTimeoutMs ?? MESSAGING_DEFAULTS.gapTimeoutMs,
      reconcile: options.reconcile,
    });
  }

  /** This consumer's counts since it was built, read from the tallies that move its series. */
  get stats(): ConsumerStats {
    return consumerStatsOf(this.counts);
  }

  /**
   * Handle one envelope (already parsed). Resolves once its effect is committed. Throws what the
   * handler throws; the delivery path (`deliver`) turns that into a retry or a dead letter.
   */
  async handle(input: Envelope): Promise<HandleResult> {
    const envelope = parseEnvelope(input);
    return consumeSpan(
      this.name,
      envelope,
      this.metrics,
      () => this.clock.now(),
      () => this.handleParsed(envelope),
    );
  }

  private async handleParsed(envelope: Envelope): Promise<HandleResult> {
    await this.ownCollection();
    // Facts mode passes over a filtered type untouched; sequenced mode consumes its version (see `action`).
    if (this.mode === "facts" && this.types && !this.types.has(envelope.type)) {
      return this.count({ outcome: "ignored", released: 0 });
    }
    const result = this.mode === "sequenced" ? await this.handleSequenced(envelope) : await this.handleFact(envelope);
    return this.count(result);
  }

  private count(result: HandleResult): HandleResult {
    const key = { applied: "applied", duplicate: "duplicates", parked: "parked", ignored: "ignored" } as const;
    // Its releases are counted where they happen (`releaseParked`).
    this.counts[key[result.outcome]].inc();
    return result;
  }

  /**
   * The transport-facing path. Never throws for a bad message: unparseable bodies and terminal
   * errors are dead-lettered at once, retryable failures are nak'ed with backoff until the last
   * delivery, which is dead-lettered; only then is the message acknowledged. A message this code
   * cannot read yet is deferred to a newer worker (`defer`), never dead-lettered for it.
   * If writing the dead letter itself fails, the error propagates and the transport redelivers.
   */
  async deliver(delivery: Delivery): Promise<DeliveryOutcome> {
    // The durable copy of an event this process handed over: settled by that handling.
    const handedOver = this.handedOver.take(delivery.messageId, delivery.body);
    if (handedOver && (await handedOver)) {
      this.counts.copiesSettled.inc();
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
      this.firstFailure.delete(envelope.eventId);
      this.deferred.delete(envelope.eventId);
      return { kind: "ack" };
    } catch (error) {
      if (error instanceof VersionTooNewError) return this.defer(delivery, envelope, error);
      if (error instanceof ReleaseFailedError) return this.retryRelease(delivery, error);
      const first = this.firstFailure.get(envelope.eventId) ?? { at: this.clock.now(), attempt: delivery.attempt };
      this.firstFailure.set(envelope.eventId, first);
      // The journal being unreachable, or the collection held by another writer (an operator's
      // matter, see `collection-owners.ts`), says nothing about the message: never a reason to give up on it.
      // Nor is a command that could not reach its actor's owner (a slice moving between workers, an
      // owner cut off until its lease lapses): the owner is the matter, and it settles within a lease.
      const outage =
        error instanceof StorageUnavailableError || error instanceof CollectionOwnedError || isRoutingError(error);
      // Deliveries before this process first failed on it (another instance's, or an older
      // release's deferrals: the broker counts those too) are not this message's failures here.
      const failures = delivery.attempt - first.attempt + 1;
      const last = failures >= Math.min(delivery.maxDeliveries, this.maxDeliveries);
      if (!outage && (!isRetryable(error) || last)) return this.deadLetterOrRetry(delivery, envelope, error);
      this.metrics.handled.inc({ consumer: this.name, outcome: "retry" });
      this.logger.warn(
        { consumer: this.name, eventId: envelope.eventId, attempt: delivery.attempt, err: error },
        "handler failed; will retry",
      );
      return { kind: "nak", delayMs: backoffMs(failures, this.retryBaseMs, this.retryMaxMs) };
    }
  }

  /**
   * Handle an event handed over at commit by this process's relay (see `EventHandOver`), before
   * and beside its durable copy. The envelope never left the process (it comes from this
   * process's own commit), so it is not verified here; the copy the transport delivers is the
   * signed one. Resolves true once handled (applied, a duplicate or passed over), false otherwise:
   * a failure is counted (`stats.handOverFailures`, outcome `hand-over-failed`), logged at debug and left to the durable copy, which gets the retries, the dead
   * letter and the counts of any delivery; a sequenced version parked behind a gap is released by
   * its predecessor as usual. Never throws.
   *
   * The durable copy (same message id, same body) is then settled from memory once this handling
   * has: no journal read for it, and never two handlings of one event at once in this process.
   * Past `HAND_OVER_CONCURRENCY` handlings at once, an event is declined (resolves false, counted
   * as `hand-over-declined`) and its durable copy handled as any delivery.
   */
  /**
   * Before the commit that appends this event's copy to the published log (`HandOverTarget`): the
   * copy, should a reader read it before the hand-over, waits for the hand-over's handling.
   */
  expectHandOver(copy: DurableCopy): (envelope: Envelope | undefined) => void {
    const settle = this.handedOver.expect(copy);
    return (envelope) => settle(envelope ? this.handOver(envelope, copy) : Promise.resolve(false));
  }

  handOver(envelope: Envelope, copy: DurableCopy): Promise<boolean> {
    if (this.handingOver >= HAND_OVER_CONCURRENCY) {
      this.metrics.handled.inc({ consumer: this.name, outcome: "hand-over-declined" });
      return Promise.resolve(false);
    }
    this.handingOver++;
    const handled = consumeSpan(
      this.name,
      envelope,
      this.metrics,
      () => this.clock.now(),
      () => this.handleParsed(envelope),
    ).then(
      (result) => {
        this.counts.handedOver.inc();
        return result.outcome !== "parked";
      },
      (error: unknown) => {
        // Counted and logged; the warnings, retries and dead letter are the durable copy's.
        this.counts.handOverFailures.inc();
        this.logger.debug(
          { consumer: this.name, eventId: envelope.eventId, err: error },
          "handed-over event not handled; its durable copy will be",
        );
        return false;
      },
    );
    void handled.finally(() => this.handingOver--);
    this.handedOver.remember(copy, handled);
    return handled;
  }

  /**
   * This message was applied; a version it released failed and will be tried again. Its redelivery
   * (a duplicate) releases again, with the transport's backoff. On its last delivery it is acked:
   * the released version keeps its own count and the gap check releases it from then on.
   */
  private retryRelease(delivery: Delivery, error: ReleaseFailedError): DeliveryOutcome {
    if (delivery.attempt >= Math.min(delivery.maxDeliveries, this.maxDeliveries)) {
      this.logger.warn(
        { consumer: this.name, source: error.source, version: error.version, err: error },
        "released version still failing; the gap check will release it again",
      );
      return { kind: "ack" };
    }
    return { kind: "nak", delayMs: backoffMs(delivery.attempt, this.retryBaseMs, this.retryMaxMs) };
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
    try {
      if (await this.alreadyHandled(envelope)) {
        this.deferred.delete(envelope.eventId);
        this.count({ outcome: "duplicate", released: 0 });
        return { kind: "ack" };
      }
    } catch (inboxError) {
      if (inboxError instanceof MessageConflictError) return this.deadLetterOrRetry(delivery, envelope, inboxError);
      // The inbox could not be read (journal unreachable): the message is deferred all the same.
    }
    const delayMs = backoffMs(delivery.attempt, this.deferBaseMs, this.deferMaxMs);
    this.metrics.deferred.inc({ consumer: this.name, reason: "version-too-new" });
    if (!this.deferred.has(envelope.eventId)) {
      if (this.deferred.size >= 10_000) this.deferred.delete(this.deferred.values().next().value as string);
      this.deferred.add(envelope.eventId);
      this.logger.warn(
        {
          consumer: this.name,
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
    try {
      await this.deadLetter(delivery, envelope, error, delivery.attempt, id);
    } catch (writeError) {
      this.logger.warn(
        { consumer: this.name, attempt: delivery.attempt, err: writeError },
        "could not store the dead letter; the message will come back",
      );
      return { kind: "nak", delayMs: backoffMs(delivery.attempt, this.retryBaseMs, this.retryMaxMs) };
    }
    if (envelope) {
      this.firstFailure.delete(envelope.eventId);
      this.deferred.delete(envelope.eventId);
    }
    return { kind: "ack" };
  }

  /** Decode, verify and handle a stored body (dead-letter replay): the same path as a delivery, errors thrown. */
  replayBody(body: string, subject?: string): Promise<HandleResult> {
    const envelope = decodeEnvelope(body);
    const refused = this.refusal(envelope, subject);
    return refused ? Promise.reject(refused) : this.handle(envelope);
  }

  /** Why the verifier refuses this envelope, if it does (other errors of the verifier propagate). */
  private refusal(envelope: Envelope, subject: string | undefined): AuthenticityError | undefined {
    try {
      this.verifier?.verify(envelope, subject);
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
    const id = `${this.name}|rejected|${bodyFingerprint(delivery.body)}`;
    const outcome = await this.deadLetterOrRetry(delivery, envelope, refused, id);
    if (outcome.kind === "nak") return outcome;
    this.metrics.rejected.inc({ consumer: this.name, reason: refused.reason });
    return { kind: "term", reason: refused.message };
  }

  private async deadLetter(
    delivery: Pick<Delivery, "body" | "messageId"> & { subject: string | null },
    envelope: Envelope | undefined,
    thrown: unknown,
    attempts: number,
    fixedId?: string,
    unpark?: Commit["unpark"],
  ): Promise<void> {
    const error = toError(thrown);
    const now = this.clock.now();
    const messageId = envelope?.eventId ?? delivery.messageId ?? null;
    const reason = deadLetterReason(thrown, envelope !== undefined);
    const conflict = thrown instanceof MessageConflictError ? thrown : undefined;
    // Deterministic id for a known message: a redelivery after a crash between this commit and
    // the ack writes the same dead letter again, which the journal ignores. A conflict gets its
    // own id (per content), as the eventId may already have a dead letter of its own; so does a
    // message refused as unauthentic (`fixedId`, from its body).
    // Ids are derived storably: the message id may hold any text (the journal keeps it as it is).
    const known = messageId === null ? this.ids.next() : storableId(messageId);
    const suffix = conflict && envelope ? `|conflict|${messageHash(envelope).slice(0, 16)}` : "";
    const id = fixedId ?? `${this.name}|${known}${suffix}`;
    await this.journal.commit({
      deadLetters: [
        {
          id,
          consumer: this.name,
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
          firstFailedAt: (messageId && this.firstFailure.get(messageId)?.at) || now,
          lastFailedAt: now,
        },
      ],
      unpark,
      now,
    });
    this.counts.deadLetters.inc();
    if (conflict) this.counts.conflicts.onLabels(this.metrics.conflicts, { consumer: this.name, kind: conflict.kind });
    this.metrics.handled.inc({ consumer: this.name, outcome: "dead" });
    this.logger.error(
      { consumer: this.name, messageId, subject: delivery.subject, attempts, reason, err: error },
      "message dead-lettered",
    );
  }

  /**
   * Subscribe this consumer to a transport. A projection first claims its collection: a consumer
   * of another name writing it already is refused here, before any message is taken.
   */
  async subscribe(transport: Transport, options: Omit<SubscribeOptions, "maxDeliveries">): Promise<Subscription> {
    await this.ownCollection();
    return transport.subscribe(this.name, { ...options, maxDeliveries: this.maxDeliveries }, (d) => this.deliver(d));
  }

  /** Claim the projection's collection once per process (see `collection-owners.ts`). */
  private ownCollection(): Promise<void> {
    const handler = this.handler;
    if (handler.kind !== "projection" || this.rebuilding) return Promise.resolve();
    this.ownership ??= claimCollection(this.journal, handler.collection, this.name, this.clock.now()).catch(
      (error: unknown) => {
        this.ownership = undefined;
        throw error;
      },
    );
    return this.ownership;
  }

  // ---- facts mode ----

  private async handleFact(envelope: Envelope): Promise<HandleResult> {
    const handler = this.handler;
    if (handler.kind === "command") return this.handleFactCommand(envelope);
    const id = handler.key(envelope);
    if (id === undefined) return { outcome: "ignored", released: 0 };
    return this.locks.run(`doc:${handler.collection}/${id}`, () =>
      this.withConflictRetries(async () => {
        // No read of the inbox before the write: the commit's inbox row refuses a message handled
        // before, with nothing written (a journal conformance rule), and only then is the held row
        // read, to tell an exact duplicate from a conflict. Should the revision guard refuse first
        // (another instance moved the document), the retry reads again and meets the duplicate. A
        // duplicate costs a projection that is thrown away; every other message one statement less.
        const guard = { consumer: `${this.name}#doc`, source: `${handler.collection}/${id}` };
        const revision = await this.journal.getCheckpoint(guard.consumer, guard.source);
        const { documents, backwards } = await this.projectDocument(envelope, id);
        try {
          await this.journal.commit({
            inbox: this.inboxRow(envelope),
            documents,
            checkpoint: { ...guard, version: revision + 1, expected: revision },
            now: this.clock.now(),
          });
        } catch (error) {
          if (error instanceof DuplicateMessageError && (await this.alreadyHandled(envelope))) {
            return { outcome: "duplicate", released: 0 };
          }
          throw error;
        }
        this.countBackwards(backwards);
        return { outcome: "applied", released: 0 };
      }),
    );
  }

  /**
   * The actor's inbox dedups the command; the consumer's own inbox row, committed after it, holds
   * the message's hash so a later copy with other content is a conflict, not a duplicate.
   * Failure window: a crash between the actor's commit and this one leaves no row; the
   * redelivery reaches the actor again (which answers from its inbox) and writes the row then.
   */
  private async handleFactCommand(envelope: Envelope): Promise<HandleResult> {
    if (await this.alreadyHandled(envelope)) return { outcome: "duplicate", released: 0 };
    const outcome = await this.sendCommand(envelope);
    if (outcome === "ignored") return { outcome, released: 0 };
    try {
      await this.journal.commit({ inbox: this.inboxRow(envelope), now: this.clock.now() });
    } catch (error) {
      if (!(error instanceof DuplicateMessageError && (await this.alreadyHandled(envelope)))) throw error;
    }
    return { outcome, released: 0 };
  }

  /** The consumer's inbox row for a handled message, with its hash (see `./conflicts.ts`). */
  private inboxRow(envelope: Envelope): NonNullable<Commit["inbox"]> {
    return { consumer: this.name, messageId: envelope.eventId, reply: heldMessage(envelope) };
  }

  /** True for an exact duplicate; throws `MessageConflictError` when the eventId was handled with other content. */
  private async alreadyHandled(envelope: Envelope): Promise<boolean> {
    const held = await this.journal.getInbox(this.name, envelope.eventId);
    if (!held) return false;
    requireSameMessage(this.name, envelope, held);
    return true;
  }

  /**
   * The document's next value, and the facts whose transition the projection found backwards:
   * counted by the caller once its commit lands, so that a duplicate thrown away at the commit, or
   * an attempt retried after a conflict, counts nothing.
   */
  private async projectDocument(
    envelope: Envelope,
    id: string,
  ): Promise<{ documents: Commit["documents"]; backwards: string[] }> {
    const handler = this.handler;
    const backwards: string[] = [];
    if (handler.kind !== "projection") return { documents: [], backwards };
    const current = await this.journal.getDocument(handler.collection, id);
    const tools: ProjectTools = {
      advance: (fact, m, from, to) => {
        const result = m.advance(from, to);
        if (result.backwards) backwards.push(fact);
        return result;
      },
    };
    const next = handler.project(current?.doc, envelope, tools);
    return { documents: next === undefined ? [] : [{ collection: handler.collection, id, doc: next }], backwards };
  }

  private countBackwards(facts: readonly string[]): void {
    for (const fact of facts) this.counts.backwards.onLabels(this.metrics.backwards, { consumer: this.name, fact });
  }

  /** Returns "applied" or "duplicate" as the actor saw it. */
  private async sendCommand(envelope: Envelope): Promise<"applied" | "duplicate" | "ignored"> {
    if (this.handler.kind !== "command" || !this.runtime) return "ignored";
    const target = this.handler.route(envelope);
    if (!target) return "ignored";
    const result = await (this.commands ?? this.runtime).send(target.address, target.command, {
      messageId: envelope.eventId,
      causationId: envelope.eventId,
      correlationId: envelope.correlationId,
    });
    return result.duplicate ? "duplicate" : "applied";
  }

  private async withConflictRetries<T>(work: () => Promise<T>): Promise<T> {
    for (let attempt = 0; attempt <= this.maxConflictRetries; attempt++) {
      try {
        return await work();
      } catch (error) {
        if (error instanceof CheckpointConflictError) continue;
        throw error;
      }
    }
    throw new RetriesExhaustedError(
      `consumer "${this.name}" kept conflicting with another instance`,
      this.maxConflictRetries + 1,
    );
  }

  // ---- sequenced mode ----

  private handleSequenced(envelope: Envelope): Promise<HandleResult> {
    if (envelope.aggregateVersion === undefined) {
      return Promise.reject(
        new InvalidInputError(
          `sequenced consumer "${this.name}" got event ${envelope.eventId} (${envelope.type}) without aggregateVersion`,
        ),
      );
    }
    const version = envelope.aggregateVersion;
    const source = sourceStreamOf(envelope);
    return this.locks.run(`src:${source}`, () =>
      this.withConflictRetries(async () => {
        // The checkpoint first, then the inbox: a handled event's inbox row and checkpoint advance
        // are one commit, so a checkpoint past this version (another instance of this consumer, a
        // second worker reading the same log, may just have applied this very event) is always
        // seen with the inbox row that makes it a duplicate. Read the other way round, that commit
        // could land between the two reads and pass for another event's.
        const checkpoint = await this.journal.getCheckpoint(this.name, source);
        if (await this.alreadyHandled(envelope)) {
          // A copy of a handled event applies nothing, but what its first delivery was to release
          // may still wait (that delivery failed or crashed after its apply): release it now.
          return { outcome: "duplicate", released: await this.releaseParked(source, checkpoint) };
        }
        // Not in the inbox at or below the checkpoint: another event took this version, or an
        // operator skipped it as lost (`skipGap`); either way this copy is recorded, not dropped.
        if (version <= checkpoint) {
          throw versionConflict(this.name, envelope, source, { state: "taken (applied, or skipped past)" });
        }
        const parked = await this.journal.getParked(this.name, source, version);
        if (parked) {
          const held = parseEnvelope(parked.message);
          if (held.eventId !== envelope.eventId || messageHash(held) !== messageHash(envelope)) {
            // The parked one came first and keeps the version; release it if it is due.
            if (version === checkpoint + 1) await this.releaseParked(source, checkpoint);
            throw versionConflict(this.name, envelope, source, {
              state: "parked",
              eventId: held.eventId,
              envelope: held,
            });
          }
        }
        if (version > checkpoint + 1) return this.park(envelope, source, version);
        const outcome = await this.applyNext(envelope, source, checkpoint);
        const released = await this.releaseParked(source, checkpoint + 1);
        return { outcome, released };
      }),
    );
  }

  /**
   * Park a version that arrived ahead of a gap: in the journal (not in memory), so a restart loses
   * nothing; parking the same version twice is a no-op. Another instance may have moved the
   * checkpoint after our read: read it again after the park. Just below this version, this
   * instance releases at once rather than at the next gap check; at or past it, the row just
   * written is stale and goes, and the copy is a duplicate or a conflict as on the direct path.
   */
  private async park(envelope: Envelope, source: string, version: number): Promise<HandleResult> {
    await this.journal.commit({
      park: [{ consumer: this.name, source, version, message: envelope }],
      now: this.clock.now(),
    });
    const checkpoint = await this.journal.getCheckpoint(this.name, source);
    if (checkpoint === version - 1)
      return { outcome: "parked", released: await this.releaseParked(source, checkpoint) };
    if (checkpoint < version) return { outcome: "parked", released: 0 };
    await this.journal.commit({ unpark: [{ consumer: this.name, source, version }], now: this.clock.now() });
    if (await this.alreadyHandled(envelope)) return { outcome: "duplicate", released: 0 };
    throw versionConflict(this.name, envelope, source, { state: "taken (applied, or skipped past)" });
  }

  /**
   * What this consumer does with a sequenced event. Every version is consumed in order, so an event
   * the consumer passes over (a type outside `types`, a projection key or command route of
   * `undefined`) still advances the checkpoint, as a no-op with its inbox row: it never holds up the
   * versions behind it, and is counted as `ignored`.
   */
  private action(envelope: Envelope): "ignore" | "command" | { collection: string; id: string } {
    if (this.types && !this.types.has(envelope.type)) return "ignore";
    const handler = this.handler;
    if (handler.kind === "command") return handler.route(envelope) === undefined ? "ignore" : "command";
    const id = handler.key(envelope);
    return id === undefined ? "ignore" : { collection: handler.collection, id };
  }

  /**
   * Apply the next expected version: the update, the inbox row, the checkpoint advance (guarded by
   * the expected previous version) and the unpark of this version, in one commit. A projection's
   * commit also guards the document's revision (`<name>#doc`, as in facts mode), under a lock per
   * document: events of several source streams may write one document, and neither concurrent
   * deliveries here nor another instance of this consumer may lose an update to it.
   */
  private async applyNext(
    envelope: Envelope,
    source: string,
    checkpoint: number,
  ): Promise<"applied" | "duplicate" | "ignored"> {
    const version = checkpoint + 1;
    const advance = {
      checkpoint: { consumer: this.name, source, version, expected: checkpoint },
      unpark: [{ consumer: this.name, source, version }],
    };
    const action = this.action(envelope);
    if (action === "ignore" || action === "command") {
      // The actor dedups by eventId; our commit after it only records progress.
      const sent = action === "command" ? await this.sendCommand(envelope) : "ignored";
      const outcome = await this.commitAdvance(envelope, advance, []);
      return outcome === "duplicate" || sent === "duplicate" ? "duplicate" : sent;
    }
    return this.locks.run(`doc:${action.collection}/${action.id}`, async () => {
      const guard = { consumer: `${this.name}#doc`, source: `${action.collection}/${action.id}` };
      const revision = await this.journal.getCheckpoint(guard.consumer, guard.source);
      const { documents, backwards } = await this.projectDocument(envelope, action.id);
      const outcome = await this.commitAdvance(envelope, advance, documents, {
        ...guard,
        version: revision + 1,
        expected: revision,
      });
      if (outcome === "applied") this.countBackwards(backwards);
      return outcome;
    });
  }

  /** Commit one applied version; a message id handled under another version slot only advances. */
  private async commitAdvance(
    envelope: Envelope,
    advance: Pick<Commit, "checkpoint" | "unpark">,
    documents: Commit["documents"],
    revision?: CheckpointWrite,
  ): Promise<"applied" | "duplicate"> {
    try {
      await this.journal.commit({
        inbox: this.inboxRow(envelope),
        documents,
        ...advance,
        ...(revision ? { checkpoints: [revision] } : {}),
        now: this.clock.now(),
      });
    } catch (error) {
      if (!(error instanceof DuplicateMessageError)) throw error;
      // The eventId was handled before under another version slot (a replay, or a producer that
      // reused an id): do not apply it twice, but do not leave the stream stuck either.
      await this.journal.commit({ ...advance, now: this.clock.now() });
      return "duplicate";
    }
    const checkpointStoredFault = this.faults.hit("consumer.checkpointStored");
    if (checkpointStoredFault) await checkpointStoredFault;
    return "applied";
  }

  /**
   * Apply parked successors in order while the next expected version is among them: one point read
   * per step, however many are parked. Call under the source lock.
   *
   * A released version is handled as a delivery of its own: a failure is charged to it, not to the
   * message that released it. A terminal failure, or a retryable one that has failed
   * `maxDeliveries` times, makes it a dead letter of its own (its own body, unparked in the same
   * commit) and the sequence holds at its version, to be alerted on as a gap; a retryable failure
   * below that count throws `ReleaseFailedError` (retryable) so that the delivery or gap check that
   * released it tries again later. A version this code cannot read yet stays parked for a newer
   * worker. The journal being unreachable, or another instance moving the checkpoint, propagate.
   */
  private async releaseParked(source: string, known?: number): Promise<number> {
    let released = 0;
    // The checkpoint the caller just read or committed, then the one each applied step commits: one
    // read per step. Should another instance have moved it meanwhile, the step's guarded commit is
    // refused and the caller's conflict retry reads it again.
    let at = known;
    for (;;) {
      const checkpoint = at ?? (await this.journal.getCheckpoint(this.name, source));
      const next = await this.journal.getParked(this.name, source, checkpoint + 1);
      if (!next) return released;
      const envelope = parseEnvelope(next.message);
      try {
        await this.applyNext(envelope, source, checkpoint);
        this.releaseFailures.delete(envelope.eventId);
        at = checkpoint + 1;
      } catch (error) {
        if (error instanceof StorageUnavailableError || error instanceof CheckpointConflictError) throw error;
        if (error instanceof VersionTooNewError) {
          this.metrics.deferred.inc({ consumer: this.name, reason: "version-too-new" });
          this.logger.warn(
            { consumer: this.name, source, version: checkpoint + 1, eventId: envelope.eventId, err: error },
            "parked version left for a newer worker",
          );
          return released;
        }
        const attempts = (this.releaseFailures.get(envelope.eventId) ?? 0) + 1;
        if (isRetryable(error) && attempts < this.maxDeliveries) {
          this.releaseFailures.set(envelope.eventId, attempts);
          this.metrics.handled.inc({ consumer: this.name, outcome: "retry" });
          this.logger.warn(
            { consumer: this.name, source, version: checkpoint + 1, eventId: envelope.eventId, attempts, err: error },
            "released version failed; will retry",
          );
          throw new ReleaseFailedError(this.name, source, checkpoint + 1, error);
        }
        this.releaseFailures.delete(envelope.eventId);
        await this.deadLetterParked(envelope, source, checkpoint + 1, error, attempts);
        return released;
      }
      released++;
      this.counts.released.inc();
    }
  }

  /** A released version that failed: its own dead letter, unparked in the same commit. */
  private async deadLetterParked(
    envelope: Envelope,
    source: string,
    version: number,
    error: unknown,
    attempts: number,
  ): Promise<void> {
    // No subject: it arrived long before, and replay verifies the signature alone.
    const message = { subject: null, body: encodeEnvelope(envelope), messageId: envelope.eventId };
    await this.deadLetter(message, envelope, error, attempts, undefined, [{ consumer: this.name, source, version }]);
  }

  /** Release whatever is releasable for a source (after a skip, or a crash between apply and release). */
  release(source: string): Promise<number> {
    return this.locks.run(`src:${source}`, () => this.withConflictRetries(() => this.releaseParked(source)));
  }

  /**
   * Move a source's checkpoint past a gap to just below its first parked version, then release
   * what was parked. The skipped versions are recorded on the gap alert. Use when the missing
   * events are known to be lost for good.
   */
  skipGap(source: string): Promise<{ from: number; to: number } | undefined> {
    return this.locks.run(`src:${source}`, () =>
      this.withConflictRetries(async () => {
        const skipped = await commitGapSkip(this.journal, { consumer: this.name, source, now: this.clock.now() });
        if (!skipped) return undefined;
        const { from, to } = skipped;
        this.logger.warn({ consumer: this.name, source, from, to }, "gap skipped");
        await this.releaseParked(source);
        return { from, to };
      }),
    );
  }

  /** Sequenced: alert on gaps open longer than the timeout (once each) and run the reconciliation hook. */
  checkGaps(now = this.clock.now()): Promise<GapAlert[]> {
    return this.gaps.check(now);
  }

  /**
   * Check gaps every `everyMs` of clock time in the background (sequenced mode), so a gap is never
   * waited on silently. Returns a function that stops the watch.
   */
  watchGaps(everyMs: number): () => void {
    const abort = new AbortController();
    void (async () => {
      while (!abort.signal.aborted) {
        try {
          await this.clock.sleep(everyMs, abort.signal);
          await this.checkGaps();
        } catch (error) {
          if (!abort.signal.aborted) this.logger.error({ consumer: this.name, err: error }, "gap check failed");
        }
      }
    })();
    return () => abort.abort();
  }

  listGapAlerts(): Promise<GapAlert[]> {
    return this.gaps.list();
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
