import type { ConsumerMessages, JetStreamClient, JetStreamManager, JsMsg } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/transport-node";
import type { Logger } from "../core/logger.js";
import {
  backoffMs,
  type Delivery,
  type DeliveryHandler,
  type DeliveryOutcome,
  type Subscription,
} from "../messaging/transport.js";
import { SeriesTally } from "../observability/tally.js";
import { type NatsMetrics, natsMetrics } from "./metrics.js";

export interface PullLoopOptions {
  nc: NatsConnection;
  js: JetStreamClient;
  /** Asked for the durable's counts (`pending`). */
  jsm: JetStreamManager;
  stream: string;
  durable: string;
  handler: DeliveryHandler;
  maxDeliveries: number;
  concurrency: number;
  logger: Logger;
  retryBaseMs: number;
  retryMaxMs: number;
  /** The durable's `ack_wait`: a message in handling is reported in progress three times per period. */
  ackWaitMs: number;
  /** The subject a subscriber sees, from the wire subject (a partitioned transport drops the slice token). */
  subjectOf?: (wire: string) => string;
  /** Where the loop's restarts are counted; a private registry when absent. */
  metrics?: NatsMetrics;
}

/**
 * One durable's consume loop. Messages are acknowledged only after the handler resolved (after
 * the consumer's commit). The loop survives everything but `stop()` and a closed connection:
 * when the pull iterator ends or fails, when heartbeats are missed, and after every reconnect,
 * it opens a fresh `consume()` on the same durable, which resumes from the server's ack floor.
 *
 * Failure window: a message handled and committed but whose ack is lost (crash, disconnect) is
 * redelivered after `ack_wait`; the consumer's inbox answers it as a duplicate. The messages a
 * killed process held (handling or buffered) also come back only after `ack_wait`, which is why it
 * is short and a message still in handling is reported in progress (`working`) meanwhile: a slow
 * handler's message is not handed to another instance, a dead one's is not held for long.
 */
export class PullLoop implements Subscription {
  private stopped = false;
  private current: ConsumerMessages | undefined;
  private readonly inFlight = new Set<Promise<void>>();
  private readonly done: Promise<void>;
  /** Restarts of the consume loop, each moved with `oncely_nats_consume_restarts_total`. */
  private readonly restarts: SeriesTally;
  /**
   * Messages handed to the handler: a test aid with no series of its own, since the consumer
   * counts what became of each (`oncely_consumer_messages_total`).
   */
  private delivered = 0;

  constructor(private readonly o: PullLoopOptions) {
    this.restarts = new SeriesTally((o.metrics ?? natsMetrics()).consumeRestarts.labels({ consumer: o.durable }));
    this.watchStatus();
    this.done = this.run();
  }

  /** This loop's counts since it was built. */
  get stats(): { restarts: number; delivered: number } {
    return { restarts: this.restarts.value, delivered: this.delivered };
  }

  private watchStatus(): void {
    void (async () => {
      for await (const status of this.o.nc.status()) {
        if (this.stopped) return;
        if (status.type === "reconnect") {
          // Pull requests made before the disconnect are gone with the old server connection.
          this.o.logger.info({ durable: this.o.durable }, "reconnected; restarting consume");
          void this.current?.close();
        }
      }
    })().catch(() => {});
  }

  private async run(): Promise<void> {
    while (!this.stopped && !this.o.nc.isClosed()) {
      try {
        const consumer = await this.o.js.consumers.get(this.o.stream, this.o.durable);
        const messages = await consumer.consume({ max_messages: Math.max(this.o.concurrency * 2, 10) });
        this.current = messages;
        // stop() may have run while consume() was being opened: it could not close this one.
        if (this.stopped) void messages.close();
        void (async () => {
          for await (const s of messages.status()) {
            if (s.type === "heartbeats_missed" && s.count >= 2) void messages.close();
          }
        })().catch(() => {});
        for await (const m of messages) {
          // Not acked: redelivered after ack_wait. A closed connection could not ack anyway.
          if (this.stopped || this.o.nc.isClosed()) break;
          while (this.inFlight.size >= this.o.concurrency) await Promise.race(this.inFlight);
          const task = this.handle(m).finally(() => this.inFlight.delete(task));
          this.inFlight.add(task);
        }
      } catch (error) {
        if (!this.stopped) this.o.logger.warn({ durable: this.o.durable, err: error }, "consume failed; retrying");
      }
      if (this.stopped || this.o.nc.isClosed()) break;
      this.restarts.inc();
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    await Promise.allSettled([...this.inFlight]);
  }

  private async handle(m: JsMsg): Promise<void> {
    this.delivered++;
    const delivery: Delivery = {
      subject: this.o.subjectOf ? this.o.subjectOf(m.subject) : m.subject,
      body: m.string(),
      messageId: m.headers?.get("Nats-Msg-Id") || undefined,
      attempt: m.info.deliveryCount,
      maxDeliveries: this.o.maxDeliveries,
    };
    let outcome: DeliveryOutcome;
    const inProgress = setInterval(
      () => {
        try {
          m.working();
        } catch {
          // Connection gone: nothing to extend; the message comes back after ack_wait.
        }
      },
      Math.max(50, Math.floor(this.o.ackWaitMs / 3)),
    );
    try {
      outcome = await this.o.handler(delivery);
    } catch (error) {
      this.o.logger.warn({ durable: this.o.durable, subject: m.subject, err: error }, "handler threw; nak");
      outcome = { kind: "nak", delayMs: backoffMs(delivery.attempt, this.o.retryBaseMs, this.o.retryMaxMs) };
    } finally {
      clearInterval(inProgress);
    }
    try {
      if (outcome.kind === "ack") m.ack();
      else if (outcome.kind === "nak") m.nak(outcome.delayMs);
      else m.term(outcome.reason);
    } catch (error) {
      // Connection gone: the server redelivers after ack_wait; the inbox makes that harmless.
      this.o.logger.warn({ durable: this.o.durable, err: error }, "could not settle message");
    }
  }

  /**
   * The durable's messages not yet delivered (`num_pending`, those matching its filter) plus those
   * delivered and not acknowledged (`num_ack_pending`: being handled, buffered in this client, or
   * waiting for redelivery after a nak or a lost ack), as the server counts them now. An ack is
   * sent without waiting for the server's answer, so a message just settled may count for a moment.
   */
  async pending(): Promise<number> {
    const info = await this.o.jsm.consumers.info(this.o.stream, this.o.durable);
    return info.num_pending + info.num_ack_pending;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.current?.close().catch(() => {});
    await this.done;
  }
}
