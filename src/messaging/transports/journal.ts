import type { Registry } from "prom-client";
import { JOURNAL_TRANSPORT_DEFAULTS, MESSAGING_DEFAULTS, positiveInteger, positiveMs } from "../../base/defaults.js";
import type { Clock, Random } from "../../core/clock.js";
import { resolveEnvironment } from "../../core/environment.js";
import type { Logger } from "../../core/logger.js";
import type { NewPublished, PublishedLog } from "../../journal/types.js";
import { type Envelope, encodeEnvelope } from "../envelope.js";
import { brokerMessageId } from "../signing.js";
import { type SliceReaderMetrics, sliceReaderMetrics } from "../slice-metrics.js";
import type { DeliveryHandler, SubscribeOptions, Subscription, Transport } from "../transport.js";
import { LogReader, type LogReaderFaults, type LogReaderJournal } from "./log-reader.js";

export type { LogReaderFaults as JournalTransportFaults } from "./log-reader.js";

/**
 * The published-log entry of a signed envelope on `subject`: what `JournalTransport.publish`
 * appends, and what a commit appends when it publishes its events itself (`Relay.handOverTo` with
 * `atCommit`). Keyed by the producing aggregate: a source stream's events share a slice, and keep
 * their order for its reader.
 */
export const publishedEntry = (envelope: Envelope, subject: string): NewPublished => ({
  messageId: brokerMessageId(envelope),
  subject,
  body: encodeEnvelope(envelope),
  key: envelope.aggregateId,
});

/** What the journal transport uses of the journal: appends to the published log, and its readers' part. */
export type JournalTransportJournal = Pick<PublishedLog, "appendPublished"> & LogReaderJournal;

export interface JournalTransportOptions {
  journal: JournalTransportJournal;
  clock?: Clock;
  random?: Random;
  logger?: Logger;
  /** Injected misdelivery (duplicates, delays that reorder), for tests and the demo. */
  faults?: LogReaderFaults;
  /** Fallback poll when no wake-up arrives (default 1 s, `JOURNAL_TRANSPORT_DEFAULTS`). */
  pollMs?: number;
  /** Entries read per query and read ahead per subscription (default 256). */
  batchSize?: number;
  /** Backoff for a handler that throws instead of returning an outcome. */
  retryBaseMs?: number;
  retryMaxMs?: number;
  /** Where the readers' slice metrics go (events read per slice, slice moves); a private registry when absent. */
  registry?: Registry | undefined;
}

/**
 * The durable embedded transport: integration events go to the journal's published log, where
 * each gets a global position, and every durable consumer reads the log from its own stored
 * position (see `LogReader` for how the position moves and its failure window). Nothing lives
 * only in memory: a process killed at any point resumes each consumer from its stored position,
 * so no event is lost and none is published again on a guess. A message id already in the log is
 * stored once (the broker dedup of `brokerMessageId`), so a relay that publishes twice after a
 * crash adds nothing.
 *
 * Wake-ups: the journal's `onPublished` (in-process for memory and SQLite, LISTEN/NOTIFY on
 * PostgreSQL), with a poll every `pollMs` as the fallback (another process on a SQLite file).
 * For several machines use a broker (`oncely/nats`); on one PostgreSQL this transport works across
 * processes too.
 *
 * @example
 * const transport = new JournalTransport({ journal });
 * const relay = new Relay({ journal, transport });
 * await consumer.subscribe(transport, { subjects: ["shop.>"] });
 */
export class JournalTransport implements Transport {
  readonly name = "journal";
  private readonly journal: JournalTransportJournal;
  private readonly clock: Clock;
  private readonly random: Random;
  private readonly logger: Logger;
  private readonly faults: LogReaderFaults;
  private readonly pollMs: number;
  private readonly batchSize: number;
  private readonly retryBaseMs: number;
  private readonly retryMaxMs: number;
  private readonly metrics: SliceReaderMetrics;
  private readonly readers = new Map<string, LogReader>();
  private closed = false;
  /** A test aid, with no series: the relay counts what it publishes (`oncely_relay_published_total`). */
  readonly stats = { published: 0 };

  constructor(options: JournalTransportOptions) {
    this.journal = options.journal;
    // `faults` here are misdelivery knobs, not fault points: the environment takes the rest.
    const env = resolveEnvironment({ clock: options.clock, random: options.random, logger: options.logger });
    this.clock = env.clock;
    this.random = env.random;
    this.logger = env.logger;
    this.faults = options.faults ?? {};
    this.pollMs = positiveMs("journal transport pollMs", options.pollMs ?? JOURNAL_TRANSPORT_DEFAULTS.pollMs);
    this.batchSize = positiveInteger(
      "journal transport batchSize",
      options.batchSize ?? JOURNAL_TRANSPORT_DEFAULTS.batchSize,
    );
    this.retryBaseMs = positiveMs(
      "journal transport retryBaseMs",
      options.retryBaseMs ?? JOURNAL_TRANSPORT_DEFAULTS.retryBaseMs,
    );
    this.metrics = sliceReaderMetrics(options.registry);
    this.retryMaxMs = positiveMs(
      "journal transport retryMaxMs",
      options.retryMaxMs ?? JOURNAL_TRANSPORT_DEFAULTS.retryMaxMs,
    );
  }

  /** Append to the published log. Resolves once it is committed: then it is never lost. */
  async publish(envelope: Envelope, subject: string): Promise<void> {
    if (this.closed) throw new Error("journal transport is closed");
    await this.journal.appendPublished(publishedEntry(envelope, subject), this.clock.now());
    this.stats.published++;
  }

  async subscribe(consumerName: string, options: SubscribeOptions, handler: DeliveryHandler): Promise<Subscription> {
    if (this.closed) throw new Error("journal transport is closed");
    if (this.readers.has(consumerName))
      throw new Error(`consumer "${consumerName}" already has an active subscription`);
    const reader = new LogReader({
      journal: this.journal,
      consumer: consumerName,
      subjects: options.subjects,
      maxDeliveries: options.maxDeliveries ?? MESSAGING_DEFAULTS.maxDeliveries,
      concurrency: options.concurrency ?? MESSAGING_DEFAULTS.concurrency,
      handler,
      clock: this.clock,
      random: this.random,
      logger: this.logger,
      faults: this.faults,
      pollMs: this.pollMs,
      batchSize: this.batchSize,
      retryBaseMs: this.retryBaseMs,
      retryMaxMs: this.retryMaxMs,
      ownership: options.ownership,
      metrics: this.metrics,
    });
    this.readers.set(consumerName, reader);
    try {
      await reader.start();
    } catch (error) {
      this.readers.delete(consumerName);
      throw error;
    }
    return {
      stop: async () => {
        if (this.readers.get(consumerName) !== reader) return;
        this.readers.delete(consumerName);
        await reader.stop();
      },
      pending: () => reader.pending(),
    };
  }

  /**
   * Resolves when every subscription of this process has read the whole log and settled it, and
   * stored its position. For tests and the demo; with a simulated clock, advance it for delays.
   */
  async idle(): Promise<void> {
    for (;;) {
      await new Promise<void>((resolve) => setTimeout(resolve, 2));
      const readers = [...this.readers.values()];
      if (readers.every((r) => r.idle)) {
        // One more look at the log: an append from another process wakes nobody here.
        for (const reader of readers) reader.poke();
        await new Promise<void>((resolve) => setTimeout(resolve, 2));
        if ([...this.readers.values()].every((r) => r.idle)) return;
      }
    }
  }

  /**
   * Whether this transport's log is `journal`'s published log (the very object, or the one it
   * stands for behind a proxy such as the host's commit signal): then a commit to that journal can
   * publish its events itself (`Relay.handOverTo` with `atCommit`).
   */
  logOf(...journals: readonly object[]): boolean {
    return journals.some((journal) => journal === this.journal);
  }

  async close(): Promise<void> {
    this.closed = true;
    const readers = [...this.readers.values()];
    this.readers.clear();
    await Promise.all(readers.map((r) => r.stop()));
  }
}
