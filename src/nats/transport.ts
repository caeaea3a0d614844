import type { JetStreamClient, JetStreamManager } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/transport-node";
import type { Registry } from "prom-client";
import { MESSAGING_DEFAULTS, NATS_DEFAULTS } from "../base/defaults.js";
import { InvalidInputError } from "../base/errors.js";
import { resolveEnvironment } from "../core/environment.js";
import type { Logger } from "../core/logger.js";
import { splitsBySlice } from "../core/slices.js";
import { type Envelope, encodeEnvelope } from "../messaging/envelope.js";
import { brokerMessageId } from "../messaging/signing.js";
import { type SliceReaderMetrics, sliceReaderMetrics } from "../messaging/slice-metrics.js";
import type { DeliveryHandler, SubscribeOptions, Subscription, Transport } from "../messaging/transport.js";
import { jetStreamClient } from "./driver.js";
import { type NatsMetrics, natsMetrics } from "./metrics.js";
import { type NatsPartitions, SubjectSlices } from "./partitions.js";
import { ensureDurable, ensureStream } from "./setup.js";
import { SlicePull } from "./slice-pull.js";
import { PullLoop } from "./subscription.js";

const { jetstream, jetstreamManager } = jetStreamClient;

/** The ack wait of a durable (see `NATS_DEFAULTS.ackWaitMs` for why 5 s). */
export const DEFAULT_ACK_WAIT_MS = NATS_DEFAULTS.ackWaitMs;

export interface NatsTransportOptions {
  connection: NatsConnection;
  /** Stream name, e.g. `SHOP`. */
  stream: string;
  /** Subjects the stream captures, e.g. `["shop.>"]`. */
  subjects: string[];
  duplicateWindowMs?: number;
  storage?: "file" | "memory";
  /**
   * Redelivery after this long without ack or progress report (default 5 s). It bounds how long the
   * messages of a crashed consumer process wait before another instance gets them; a message still
   * in handling is reported in progress, so a handler may take longer than this.
   */
  ackWaitMs?: number;
  maxAckPending?: number;
  publishTimeoutMs?: number;
  logger?: Logger;
  /** Close the connection in `close()` (default false: the caller owns it). */
  ownsConnection?: boolean;
  retryBaseMs?: number;
  retryMaxMs?: number;
  /**
   * Partition events by slice (docs/design/event-partitions.md): each is published on its subject
   * plus a slice token (`shop.payment.PaymentProcessed.s17`), and a subscription given an ownership
   * (`createHost({ ownership })`) reads one durable per owned slice, `<consumer>-s<slice>`, so each
   * event goes to the worker that owns its slice. Every process on the stream must agree on it (see
   * docs/backends/nats.md for switching an existing stream).
   */
  partitions?: NatsPartitions;
  /**
   * Where the slice readers' metrics (events read per slice, slice moves) and the consume loops'
   * restarts go; a private registry when absent.
   */
  registry?: Registry | undefined;
}

/**
 * NATS JetStream transport. `publish` sets `Nats-Msg-Id` = eventId (plus the signature of a signed
 * envelope, see `brokerMessageId`), so a republish (relay crash
 * after publish, before marking) inside the stream's duplicate window is stored once. Durable pull
 * consumers with explicit ack; nak with delay on failure; max_deliver bounds redelivery.
 */
export class NatsTransport implements Transport {
  readonly name = "nats";
  private readonly js: JetStreamClient;
  private readonly loops = new Set<PullLoop | SlicePull>();
  private readonly logger: Logger;
  private readonly slices: SubjectSlices | undefined;
  private readonly metrics: SliceReaderMetrics;
  private readonly natsMetrics: NatsMetrics;

  private constructor(
    private readonly o: NatsTransportOptions,
    private readonly jsm: JetStreamManager,
  ) {
    this.js = jetstream(o.connection);
    this.logger = resolveEnvironment({ logger: o.logger }).logger;
    this.slices = o.partitions && new SubjectSlices(o.partitions);
    this.metrics = sliceReaderMetrics(o.registry);
    this.natsMetrics = natsMetrics(this.metrics.registry);
  }

  /** Connects the JetStream API and creates or updates the stream. */
  static async create(options: NatsTransportOptions): Promise<NatsTransport> {
    const jsm = await jetstreamManager(options.connection);
    await ensureStream(jsm, {
      name: options.stream,
      subjects: options.subjects,
      ...(options.duplicateWindowMs === undefined ? {} : { duplicateWindowMs: options.duplicateWindowMs }),
      ...(options.storage === undefined ? {} : { storage: options.storage }),
    });
    return new NatsTransport(options, jsm);
  }

  get connection(): NatsConnection {
    return this.o.connection;
  }

  get manager(): JetStreamManager {
    return this.jsm;
  }

  /** Resolves once the stream stored the message (or recognised it as a duplicate). */
  async publish(envelope: Envelope, subject: string): Promise<void> {
    const wire = this.slices ? this.slices.publishSubject(envelope, subject) : subject;
    await this.js.publish(wire, encodeEnvelope(envelope), {
      msgID: brokerMessageId(envelope),
      timeout: this.o.publishTimeoutMs ?? NATS_DEFAULTS.publishTimeoutMs,
    });
  }

  /**
   * A partitioned subscription reads only subjects that end in a slice token. Messages on the same
   * subjects without one (a publisher that does not partition, or messages from before the stream
   * was switched) would wait in the stream unread: counted per subject filter when a consumer
   * subscribes, warned about and kept in `oncely_nats_unpartitioned_messages`, never silently left.
   * A failure of the check is itself a warning; it does not stop the subscription.
   */
  private async checkUnpartitioned(
    consumer: string,
    patterns: readonly string[],
    slices: SubjectSlices,
  ): Promise<void> {
    let count = 0;
    const subjects: string[] = [];
    try {
      for (const pattern of patterns) {
        const info = await this.jsm.streams.info(this.o.stream, { subjects_filter: slices.unsliced(pattern) });
        for (const [subject, n] of Object.entries(info.state.subjects ?? {})) {
          count += n;
          subjects.push(subject);
        }
      }
    } catch (error) {
      this.logger.warn({ err: error, consumer }, "could not count the stream's messages without a slice token");
      return;
    }
    this.natsMetrics.unpartitioned.set({ consumer }, count);
    if (count > 0) {
      this.logger.warn(
        { consumer, stream: this.o.stream, messages: count, subjects: subjects.slice(0, 10) },
        "messages on subjects without a slice token are read by no partitioned consumer: publish them again through a partitioned transport, or switch the stream (docs/backends/nats.md)",
      );
    }
  }

  /** Publish any body (tests: malformed messages). */
  async publishRaw(subject: string, body: string, messageId?: string): Promise<void> {
    await this.js.publish(subject, body, messageId === undefined ? {} : { msgID: messageId });
  }

  async subscribe(consumerName: string, options: SubscribeOptions, handler: DeliveryHandler): Promise<Subscription> {
    const maxDeliveries = options.maxDeliveries ?? MESSAGING_DEFAULTS.maxDeliveries;
    const concurrency = options.concurrency ?? MESSAGING_DEFAULTS.concurrency;
    const ackWaitMs = this.o.ackWaitMs ?? DEFAULT_ACK_WAIT_MS;
    const slices = this.slices;
    const durable = (name: string, subjects: string[]) =>
      ensureDurable(this.jsm, {
        stream: this.o.stream,
        name,
        subjects,
        maxDeliver: -1,
        ackWaitMs,
        maxAckPending: this.o.maxAckPending ?? 1000,
      });
    if (slices) await this.checkUnpartitioned(consumerName, options.subjects, slices);
    if (slices && splitsBySlice(options.ownership)) {
      const ownership = options.ownership;
      if (ownership.sliceCount !== slices.sliceCount) {
        throw new InvalidInputError(
          `consumer "${consumerName}": its ownership counts ${ownership.sliceCount} slices and the NATS transport's partitions ${slices.sliceCount}: give both the same sliceCount`,
        );
      }
      const pull = await SlicePull.start({
        nc: this.o.connection,
        jsm: this.jsm,
        stream: this.o.stream,
        consumer: consumerName,
        ownership,
        ensureDurable: async (slice) => {
          const name = `${consumerName}-s${slice}`;
          await durable(
            name,
            options.subjects.map((pattern) => slices.filter(pattern, slice)),
          );
          return name;
        },
        logicalSubject: (wire) => slices.logicalSubject(wire),
        handler,
        maxDeliveries,
        concurrency,
        ackWaitMs,
        logger: this.logger,
        retryBaseMs: this.o.retryBaseMs ?? 200,
        retryMaxMs: this.o.retryMaxMs ?? 30_000,
        metrics: this.metrics,
      });
      this.loops.add(pull);
      return {
        stop: async () => {
          this.loops.delete(pull);
          await pull.stop();
        },
        pending: () => pull.pending(),
      };
    }
    await ensureDurable(this.jsm, {
      stream: this.o.stream,
      name: consumerName,
      subjects: slices ? options.subjects.map((pattern) => slices.filter(pattern, "*")) : options.subjects,
      // Unlimited on the server: the subscriber decides when a message is poison (it dead-letters it
      // and acks). A server-side limit would drop a message silently when the dead-letter write
      // itself failed, e.g. while the journal was unreachable.
      maxDeliver: -1,
      ackWaitMs,
      maxAckPending: this.o.maxAckPending ?? NATS_DEFAULTS.maxAckPending,
    });
    const loop = new PullLoop({
      nc: this.o.connection,
      js: this.js,
      jsm: this.jsm,
      stream: this.o.stream,
      durable: consumerName,
      handler,
      maxDeliveries,
      concurrency,
      logger: this.logger,
      retryBaseMs: this.o.retryBaseMs ?? MESSAGING_DEFAULTS.retryBaseMs,
      retryMaxMs: this.o.retryMaxMs ?? MESSAGING_DEFAULTS.retryMaxMs,
      ackWaitMs,
      metrics: this.natsMetrics,
      ...(slices ? { subjectOf: (wire: string) => slices.logicalSubject(wire) } : {}),
    });
    this.loops.add(loop);
    return {
      stop: async () => {
        this.loops.delete(loop);
        await loop.stop();
      },
      pending: () => loop.pending(),
    };
  }

  /** Delete a durable consumer (tests, decommissioning). */
  async deleteConsumer(name: string): Promise<void> {
    await this.jsm.consumers.delete(this.o.stream, name).catch(() => false);
  }

  async close(): Promise<void> {
    await Promise.all([...this.loops].map((loop) => loop.stop()));
    this.loops.clear();
    if (this.o.ownsConnection) await this.o.connection.drain().catch(() => this.o.connection.close());
  }
}

export const natsTransport = (options: NatsTransportOptions): Promise<NatsTransport> => NatsTransport.create(options);
