import type { Registry } from "prom-client";
import { RELAY_DEFAULTS } from "../base/defaults.js";
import { InvalidInputError, toError } from "../base/errors.js";
import { type Clock, type Random, SLEEP_CANCELLED } from "../core/clock.js";
import { resolveEnvironment } from "../core/environment.js";
import type { Faults } from "../core/faults.js";
import type { Logger } from "../core/logger.js";
import type { Runtime } from "../core/runtime.js";
import type { Ownership } from "../core/slices.js";
import { ownedSlices, requireSameSliceCount } from "../journal/owned-slices.js";
import type { JournalAdmin, NewOutboxRow, OutboxRow, OutboxStore } from "../journal/types.js";
import { publishSpan } from "../observability/messaging-spans.js";
import { SeriesTally, valuesOf } from "../observability/tally.js";
import { type Envelope, envelopeFromOutbox } from "./envelope.js";
import { EventHandOver, type LocalConsumer, type PreparedRow } from "./event-hand-over.js";
import { type MessagingMetrics, messagingMetrics } from "./metrics.js";
import type { Signer } from "./signing.js";
import { subjectFor } from "./subjects.js";
import { backoffMs, type Transport } from "./transport.js";
import { JournalTransport, publishedEntry } from "./transports/journal.js";

/** What a relay uses of the journal: it claims event rows, marks the ones it holds, and wakes on new ones. */
export type RelayJournal = Pick<OutboxStore, "claimOutbox" | "updateOutbox" | "onOutbox" | "getOutbox"> &
  Pick<JournalAdmin, "sliceCount">;

export interface RelayOptions {
  journal: RelayJournal;
  transport: Transport;
  /** Subject prefix: events go to `<prefix>.<source>.<type>` unless `subjectOf` says otherwise. */
  subjectPrefix?: string;
  subjectOf?: (envelope: Envelope) => string;
  /**
   * Signs every envelope before it is published (with the key of its source). An envelope whose
   * source the signer has no key for is not published: it is retried with backoff and its
   * `lastError` names the source, until the configuration is fixed.
   */
  signer?: Signer | undefined;
  /** Lease owner id; unique per relay process (default `relay`). Each claim adds a token of its own. */
  owner?: string;
  /** For the per-claim lease token (seeded in simulation). */
  random?: Random;
  clock?: Clock;
  faults?: Faults;
  logger?: Logger;
  metrics?: MessagingMetrics;
  /** Where the relay's metrics are registered when `metrics` is not given; a private registry by default. */
  registry?: Registry;
  /** A claimed row not marked within this time is claimed again (and republished). Default 30 s. */
  leaseMs?: number;
  /** Rows per claim (default 100). With in-stream order, at most one row per stream per claim. */
  batchSize?: number;
  /** Fallback poll when no outbox signal arrives (default 1000 ms). */
  pollMs?: number;
  retryBaseMs?: number;
  retryMaxMs?: number;
  /**
   * What this worker owns: it publishes only the events of owned slices (their producing streams'),
   * and a change of ownership wakes it to claim again. Absent (or owning every slice): every event.
   */
  ownership?: Ownership;
}

/**
 * Relays integration events from the outbox to the transport, after their commit.
 *
 * Guarantees: only committed rows exist in the outbox, so nothing uncommitted is published; a row
 * stays pending until it is marked done, so nothing committed is lost; rows are claimed with
 * `inStreamOrder`, so per producing stream they are published in commit order (a later event
 * waits while an earlier one is pending or leased, including during its retry backoff).
 *
 * Failure window: before `transport.publish` (fault point "relay.beforePublish") a crash leaves
 * the row leased and unpublished; it is claimed again when the lease expires, nothing is lost.
 * Between `transport.publish` and marking the row done (fault point
 * "relay.published") a crash leaves the row leased; after the lease expires it is published
 * again with the same eventId. That is harmless: the broker dedups by eventId (`Nats-Msg-Id`
 * within its window) and every consumer dedups in its inbox.
 *
 * With `handOverTo(runtime, consumers)` the rows that runtime commits skip the claim: they are
 * inserted leased to this relay, given to the local consumers in memory and published when the
 * commit returns (see `EventHandOver` for its paths, order and failure windows); the claim stays
 * for every other row. With `atCommit` (the transport's log is the runtime's journal's published
 * log: `createHost` sets it for a `JournalTransport` on its own journal) those events are not rows
 * at all: their commit appends them to the published log itself, and this relay claims, publishes
 * and marks only the rows of other runtimes (and of any time it was stopped).
 *
 * @example
 * const relay = new Relay({ journal, transport, subjectPrefix: "shop" });
 * relay.start(); // ... await relay.stop();
 */
export class Relay {
  readonly journal: RelayJournal;
  private readonly transport: Transport;
  readonly subjectOf: (envelope: Envelope) => string;
  private readonly signer: Signer | undefined;
  readonly owner: string;
  private readonly clock: Clock;
  private readonly faults: Faults;
  readonly logger: Logger;
  private readonly metrics: MessagingMetrics;
  readonly leaseMs: number;
  private readonly batchSize: number;
  private readonly pollMs: number;
  private readonly retryBaseMs: number;
  private readonly retryMaxMs: number;
  private loop: Promise<void> | undefined;
  private abort: AbortController | undefined;
  private wake: (() => void) | undefined;
  private signalled = false;
  /**
   * This relay's counts, each moved with its series (`oncely_relay_published_total`,
   * `oncely_relay_publish_failures_total`, `oncely_relay_invalid_total`), its owner bound once.
   */
  private readonly counts: { published: SeriesTally; failures: SeriesTally; invalid: SeriesTally };
  private claims = 0;
  readonly random: Random;
  private readonly ownership: Ownership | undefined;
  /** Events handed over at commit (see `handOverTo`), when this relay takes them. */
  private handOver: { runtime: Runtime; events: EventHandOver } | undefined;

  constructor(options: RelayOptions) {
    this.journal = options.journal;
    requireSameSliceCount(`Relay ${options.owner ?? "relay"}`, options.ownership, options.journal);
    this.ownership = options.ownership;
    this.transport = options.transport;
    const prefix = options.subjectPrefix ?? "oncely";
    this.subjectOf = options.subjectOf ?? ((envelope) => subjectFor(prefix, envelope));
    this.signer = options.signer;
    this.owner = options.owner ?? "relay";
    const env = resolveEnvironment(options);
    this.clock = env.clock;
    this.random = env.random;
    this.faults = env.faults;
    this.logger = env.logger;
    this.metrics = options.metrics ?? messagingMetrics(env.registry);
    const relay = { relay: this.owner };
    this.counts = {
      published: new SeriesTally(this.metrics.published.labels(relay)),
      failures: new SeriesTally(this.metrics.publishFailures.labels(relay)),
      invalid: new SeriesTally(this.metrics.relayInvalid.labels(relay)),
    };
    this.leaseMs = options.leaseMs ?? RELAY_DEFAULTS.leaseMs;
    this.batchSize = options.batchSize ?? RELAY_DEFAULTS.batchSize;
    this.pollMs = options.pollMs ?? RELAY_DEFAULTS.pollMs;
    this.retryBaseMs = options.retryBaseMs ?? RELAY_DEFAULTS.retryBaseMs;
    this.retryMaxMs = options.retryMaxMs ?? RELAY_DEFAULTS.retryMaxMs;
  }

  /**
   * One claim and publish round. Returns how many rows were claimed. Rows of different streams
   * are published concurrently; one stream never has two rows in flight (in-stream order).
   * Throws only what the fault registry injects (a simulated crash); transport errors are retried.
   */
  async runOnce(): Promise<number> {
    // A lease token of its own per claim (as the dispatcher does): a relay that stalled past its
    // lease, or another relay started with the same owner id, can no longer mark a row that was
    // claimed again after it.
    const lease = `${this.owner}#${++this.claims}.${Math.floor(this.random.next() * 2 ** 32).toString(36)}`;
    const slices = ownedSlices(this.ownership);
    const rows = await this.journal.claimOutbox({
      owner: lease,
      now: this.clock.now(),
      leaseMs: this.leaseMs,
      limit: this.batchSize,
      categories: ["event"],
      inStreamOrder: true,
      ...(slices === undefined ? {} : { slices }),
    });
    const results = await Promise.allSettled(
      rows.map((row) =>
        publishSpan(row, async () => {
          if (await this.relayRow(row, lease)) this.handOver?.events.settled(row);
        }),
      ),
    );
    const crash = results.find((r): r is PromiseRejectedResult => r.status === "rejected");
    if (crash) throw crash.reason;
    if (rows.length === 0) await this.forgetSettledReleases();
    return rows.length;
  }

  /**
   * Hand this process's integration events over at commit (see `EventHandOver`): once `start()`
   * is called, every event row `runtime` commits is inserted leased to this relay, given to the
   * matching `consumers` in memory when the commit returns, and published by this relay, with no
   * claim in between. `consumers` must subscribe to this relay's transport with these subjects:
   * the durable copy they receive from it is settled by the hand-over. The claim path stays, for
   * rows of other processes, of a process that died, and of a publish that failed. Call before
   * `start()`.
   *
   * `atCommit`: this relay's transport is a `JournalTransport` whose log is the published log of
   * `runtime`'s journal. Each event is then signed while its commit is built and appended to the
   * log by that commit (`Commit.published`): no outbox row, no claim, no publish, no mark; it is
   * still given to `consumers` when the commit returns. Leave it unset for any other transport
   * (NATS, a journal transport on another journal): the entry would land in the wrong log.
   */
  handOverTo(
    runtime: Runtime,
    consumers: readonly LocalConsumer[] = [],
    options: { atCommit?: boolean | undefined } = {},
  ): void {
    if (this.loop) throw new Error("relay.handOverTo must be called before relay.start()");
    if (options.atCommit && !(this.transport instanceof JournalTransport))
      throw new InvalidInputError(
        `relay.handOverTo atCommit needs a JournalTransport on the runtime's journal; this relay publishes to "${this.transport.name}"`,
      );
    const events = new EventHandOver(
      {
        owner: this.owner,
        leaseMs: this.leaseMs,
        journal: this.journal,
        logger: this.logger,
        random: this.random,
        subjectOf: this.subjectOf,
        prepare: (row) => this.prepare(row),
        relayRow: (row, lease, prepared) => publishSpan(row, () => this.relayRow(row, lease, prepared)),
        now: () => this.clock.now(),
        metrics: this.metrics,
        atCommit: options.atCommit
          ? {
              entry: publishedEntry,
              // Published by its commit: no lag between the commit and the publish.
              published: () => {
                this.counts.published.inc();
                this.metrics.relayLag.observe({ relay: this.owner }, 0);
              },
            }
          : undefined,
      },
      consumers,
    );
    this.handOver = { runtime, events };
  }

  /** This relay's counts since it was built, read from the tallies that move its series. */
  get stats(): { published: number; failures: number; invalid: number } {
    return valuesOf(this.counts);
  }

  /** Counters of the hand-over (zero when this relay takes no events at commit). */
  get handOverStats(): EventHandOver["stats"] {
    return this.handOver?.events.stats ?? { handedOver: 0, delivered: 0, released: 0, appended: 0 };
  }

  /**
   * Rows this relay released to the claim path after a failed publish, that another relay (or an
   * operator) settled meanwhile: forgotten, so their streams are handed over again. One point read
   * each, only while some are held back, and only when a claim found nothing.
   */
  private async forgetSettledReleases(): Promise<void> {
    const events = this.handOver?.events;
    if (!events) return;
    for (const released of events.releasedRows) {
      const row = await this.journal.getOutbox(released.id);
      if (!row || row.status === "done" || row.status === "dead") events.settled(released);
    }
  }

  /**
   * A row's envelope, signed for publishing; or why it cannot be published. The one way an event
   * becomes what crosses a process, whether a claim, the hand-over or its commit publishes it: the
   * envelope the runtime stored in the row (`buildCommit`), signed with its source's key.
   */
  prepare(row: Pick<NewOutboxRow, "id" | "category" | "payload">): PreparedRow {
    let envelope: Envelope;
    try {
      envelope = envelopeFromOutbox(row);
    } catch (error) {
      return { kind: "invalid", error };
    }
    try {
      return { kind: "ready", envelope, signed: this.signer ? this.signer.sign(envelope) : envelope };
    } catch (error) {
      return { kind: "unsigned", error };
    }
  }

  /** Run rounds until a claim comes back empty (what is due now is published). */
  async drain(): Promise<number> {
    let total = 0;
    for (;;) {
      const n = await this.runOnce();
      total += n;
      if (n === 0) return total;
    }
  }

  /** Publish one row held under `lease` and mark it; true once it is done (or dead), false when left for a retry. */
  private async relayRow(row: OutboxRow, lease: string, prepared = this.prepare(row)): Promise<boolean> {
    if (prepared.kind === "invalid") {
      // Only a bug or a hand-edited row gets here. Marking it dead unblocks the stream behind it
      // and keeps it visible in the outbox (status dead, lastError) for an operator.
      this.counts.invalid.inc();
      this.logger.error({ id: row.id, err: prepared.error }, "outbox event row is not a valid envelope; marked dead");
      await this.journal.updateOutbox(
        row.id,
        lease,
        { status: "dead", lastError: toError(prepared.error).message },
        this.clock.now(),
      );
      return true;
    }
    // A crash here leaves the row leased and unpublished: it is published after the lease expires.
    // Marking it done before publishing would lose it right here.
    const beforePublishFault = this.faults.hit("relay.beforePublish");
    if (beforePublishFault) await beforePublishFault;
    try {
      if (prepared.kind === "unsigned") throw prepared.error;
      await this.transport.publish(prepared.signed, this.subjectOf(prepared.envelope));
    } catch (error) {
      this.counts.failures.inc();
      const attempts = row.attempts + 1;
      const delay = backoffMs(attempts, this.retryBaseMs, this.retryMaxMs);
      this.logger.warn({ id: row.id, attempts, delay, err: error }, "publish failed; will retry");
      await this.journal.updateOutbox(
        row.id,
        lease,
        { attempts, notBefore: this.clock.now() + delay, lastError: toError(error).message },
        this.clock.now(),
      );
      return false;
    }
    const publishedFault = this.faults.hit("relay.published");
    if (publishedFault) await publishedFault;
    const marked = await this.journal.updateOutbox(
      row.id,
      lease,
      { status: "done", outcome: "published", attempts: row.attempts + 1, lastError: null },
      this.clock.now(),
    );
    if (!marked) this.logger.warn({ id: row.id }, "lease lost before marking published; it may be published again");
    this.counts.published.inc();
    this.metrics.relayLag.observe({ relay: this.owner }, Math.max(0, this.clock.now() - row.createdAt) / 1000);
    return true;
  }

  /** Relay in the background: wakes on the journal's signal for event rows, polls every `pollMs` as a fallback. */
  start(): void {
    if (this.loop) return;
    const abort = new AbortController();
    this.abort = abort;
    if (this.handOver) {
      this.handOver.events.setActive(true);
      this.handOver.runtime.handOver(this.handOver.events, true);
    }
    // Holding some slices, woken only for events of those: another worker's commit wakes its owner.
    const owns = this.ownership && ((slice: number) => this.ownership?.owns(slice) ?? true);
    const unsubscribe = this.journal.onOutbox(
      () => {
        this.signalled = true;
        this.wake?.();
      },
      ["event"],
      owns,
    );
    const unsubscribeOwnership = this.ownership?.onChange(() => {
      this.signalled = true;
      this.wake?.();
    });
    this.loop = (async () => {
      while (!abort.signal.aborted) {
        this.signalled = false;
        let claimed = 0;
        try {
          claimed = await this.runOnce();
        } catch (error) {
          this.logger.error({ err: error }, "relay round failed");
        }
        if (claimed > 0 || this.signalled) continue;
        await this.idle(abort.signal);
      }
      unsubscribe();
      unsubscribeOwnership?.();
    })();
  }

  private idle(signal: AbortSignal): Promise<void> {
    return new Promise<void>((resolve) => {
      const sleep = new AbortController();
      const done = () => {
        this.wake = undefined;
        sleep.abort(SLEEP_CANCELLED);
        signal.removeEventListener("abort", done);
        resolve();
      };
      this.wake = done;
      signal.addEventListener("abort", done, { once: true });
      this.clock.sleep(this.pollMs, sleep.signal).then(done, () => {});
    });
  }

  /**
   * Stop claiming and taking rows at commit; wait for the publishes in flight. Rows committed
   * leased to this relay and not yet published stay leased until `lease_until`, then any relay
   * claims them.
   */
  async stop(): Promise<void> {
    if (this.handOver) {
      this.handOver.events.setActive(false);
      this.handOver.runtime.handOver(this.handOver.events, false);
    }
    this.abort?.abort();
    await this.handOver?.events.settle();
    await this.loop;
    this.loop = undefined;
    this.abort = undefined;
  }
}
