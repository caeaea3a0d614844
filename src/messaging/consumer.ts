import { MESSAGING_DEFAULTS } from "../base/defaults.js";
import type { Clock } from "../core/clock.js";
import type { Logger } from "../core/logger.js";
import { consumeSpan } from "../observability/messaging-spans.js";
import { claimCollection } from "./collection-owners.js";
import { ConsumerContext } from "./consumer-context.js";
import { type ConsumerStats, consumerStatsOf } from "./consumer-counts.js";
import { DeliveryPath } from "./consumer-delivery.js";
import { handleFact } from "./consumer-facts.js";
import { HandOverIntake } from "./consumer-hand-over.js";
import type { ConsumerJournal, ConsumerOptions, OrderingMode } from "./consumer-options.js";
import { ParkedVersions } from "./consumer-parked-versions.js";
import { handleSequenced } from "./consumer-sequenced.js";
import { type Envelope, parseEnvelope } from "./envelope.js";
import { type GapAlert, GapMonitor } from "./gaps.js";
import type { DurableCopy, HandOverTarget } from "./handed-over.js";
import type { HandleResult } from "./handlers.js";
import type { MessagingMetrics } from "./metrics.js";
import type { Delivery, DeliveryOutcome, SubscribeOptions, Subscription, Transport } from "./transport.js";

/**
 * Consumes integration events: dedups through the inbox in the same commit as the update, in one
 * of two ordering modes, and dead-letters what cannot be handled without ever blocking the rest.
 *
 * Facts mode (`consumer-facts.ts`): each event is applied when it arrives; the handler's updates
 * must be monotonic and commutative. A document is read, projected and written with an optimistic
 * guard (a checkpoint `(<name>#doc, <collection>/<id>)` used as the document's revision), so two
 * instances of one consumer never lose an update.
 *
 * Sequenced mode (`consumer-sequenced.ts`, `consumer-parked-versions.ts`): a checkpoint per
 * producer stream (`source/aggregateId`). A copy of a handled event is a duplicate; one past a gap
 * is parked in the journal; the next expected version is applied together with the checkpoint
 * advance and its unpark, then parked successors are released in order. Gaps are watched by
 * `checkGaps` (alert once + reconciliation hook, never silent).
 *
 * Conflicts are never silent (see `./conflicts.ts`): the same eventId with other content, or another
 * eventId at a version already taken or parked, is dead-lettered with reason `conflict` and counted;
 * a sequenced event the handler has no key/route for is dead-lettered (`unhandled`) without taking
 * its version.
 *
 * Failure windows: a command handler sends to the actor (deduplicated by the actor's inbox) and
 * then commits the consumer's inbox/checkpoint; a crash between the two makes the redelivery
 * reach the actor again, which answers from its inbox. A projection commits everything at once.
 *
 * This class is the consumer's face: its options resolved once (`ConsumerContext`), the delivery
 * path (`consumer-delivery.ts`), the hand-over intake (`consumer-hand-over.ts`) and the gap monitor
 * are its parts.
 */
export class Consumer implements HandOverTarget {
  readonly name: string;
  readonly mode: OrderingMode;
  readonly journal: ConsumerJournal;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly metrics: MessagingMetrics;
  readonly gaps: GapMonitor;
  private readonly context: ConsumerContext;
  private readonly parking: ParkedVersions;
  private readonly handOvers: HandOverIntake;
  private readonly delivery: DeliveryPath;
  /** This consumer's claim on its projection's collection, made once (see `collection-owners.ts`). */
  private ownership: Promise<void> | undefined;

  constructor(options: ConsumerOptions) {
    const context = new ConsumerContext(options);
    this.context = context;
    this.name = context.name;
    this.mode = context.mode;
    this.journal = context.journal;
    this.clock = context.clock;
    this.logger = context.logger;
    this.metrics = context.metrics;
    this.parking = new ParkedVersions(context);
    this.handOvers = new HandOverIntake(context, (envelope) => this.handleParsed(envelope));
    this.delivery = new DeliveryPath(context, (envelope) => this.handle(envelope), this.handOvers);
    this.gaps = new GapMonitor(this, {
      timeoutMs: options.gapTimeoutMs ?? MESSAGING_DEFAULTS.gapTimeoutMs,
      reconcile: options.reconcile,
    });
  }

  /** This consumer's counts since it was built, read from the tallies that move its series. */
  get stats(): ConsumerStats {
    return consumerStatsOf(this.context.counts);
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
    const c = this.context;
    await this.ownCollection();
    // Facts mode passes over a filtered type untouched; sequenced mode consumes its version (see
    // `actionFor` in `consumer-sequenced-apply.ts`).
    if (this.mode === "facts" && c.types && !c.types.has(envelope.type)) {
      return c.count({ outcome: "ignored", released: 0 });
    }
    const result =
      this.mode === "sequenced" ? await handleSequenced(c, this.parking, envelope) : await handleFact(c, envelope);
    return c.count(result);
  }

  /**
   * The transport-facing path (see `DeliveryPath.deliver`). Never throws for a bad message:
   * unparseable bodies and terminal errors are dead-lettered at once, retryable failures are
   * nak'ed with backoff until the last delivery, which is dead-lettered; only then is the message
   * acknowledged. A message this code cannot read yet is deferred to a newer worker, never
   * dead-lettered for it. If writing the dead letter itself fails, the error propagates and the
   * transport redelivers.
   */
  deliver(delivery: Delivery): Promise<DeliveryOutcome> {
    return this.delivery.deliver(delivery);
  }

  /**
   * Before the commit that appends this event's copy to the published log (`HandOverTarget`): the
   * copy, should a reader read it before the hand-over, waits for the hand-over's handling.
   */
  expectHandOver(copy: DurableCopy): (envelope: Envelope | undefined) => void {
    const settle = this.handOvers.expect(copy);
    return (envelope) => settle(envelope ? this.handOver(envelope, copy) : Promise.resolve(false));
  }

  /**
   * Handle an event handed over at commit by this process's relay, before and beside its durable
   * copy (see `HandOverIntake.handOver`). Resolves true once handled, false otherwise (left to the
   * durable copy); never throws.
   */
  handOver(envelope: Envelope, copy: DurableCopy): Promise<boolean> {
    return this.handOvers.handOver(envelope, copy);
  }

  /** Decode, verify and handle a stored body (dead-letter replay): the same path as a delivery, errors thrown. */
  replayBody(body: string, subject?: string): Promise<HandleResult> {
    return this.delivery.replayBody(body, subject);
  }

  /**
   * Subscribe this consumer to a transport. A projection first claims its collection: a consumer
   * of another name writing it already is refused here, before any message is taken.
   */
  async subscribe(transport: Transport, options: Omit<SubscribeOptions, "maxDeliveries">): Promise<Subscription> {
    await this.ownCollection();
    return transport.subscribe(this.name, { ...options, maxDeliveries: this.context.maxDeliveries }, (d) =>
      this.deliver(d),
    );
  }

  /** Claim the projection's collection once per process (see `collection-owners.ts`). */
  private ownCollection(): Promise<void> {
    const handler = this.context.handler;
    if (handler.kind !== "projection" || this.context.rebuilding) return Promise.resolve();
    this.ownership ??= claimCollection(this.journal, handler.collection, this.name, this.clock.now()).catch(
      (error: unknown) => {
        this.ownership = undefined;
        throw error;
      },
    );
    return this.ownership;
  }

  /** Release whatever is releasable for a source (after a skip, or a crash between apply and release). */
  release(source: string): Promise<number> {
    return this.parking.release(source);
  }

  /**
   * Move a source's checkpoint past a gap to just below its first parked version, then release
   * what was parked. The skipped versions are recorded on the gap alert. Use when the missing
   * events are known to be lost for good.
   */
  skipGap(source: string): Promise<{ from: number; to: number } | undefined> {
    return this.parking.skipGap(source);
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
