import { MESSAGING_DEFAULTS } from "../../base/defaults.js";
import type { Clock, Random } from "../../core/clock.js";
import { resolveEnvironment } from "../../core/environment.js";
import type { Logger } from "../../core/logger.js";
import { type Envelope, encodeEnvelope } from "../envelope.js";
import { brokerMessageId } from "../signing.js";
import { subjectMatches } from "../subjects.js";
import {
  backoffMs,
  type Delivery,
  type DeliveryHandler,
  type DeliveryOutcome,
  type SubscribeOptions,
  type Subscription,
  type Transport,
} from "../transport.js";

/** Misbehaviour to inject, for tests and the demo. All choices come from the seeded `random`. */
export interface InProcessFaultKnobs {
  /** Probability that a delivery is followed by an extra copy of the same message. */
  duplicateRate?: number | undefined;
  /** Each delivery waits a random 0..maxDelayMs (clock time) first, which also reorders. */
  maxDelayMs?: number | undefined;
  /** Published messages are buffered up to this many and handed out shuffled. */
  reorderWindow?: number | undefined;
}

export interface InProcessTransportOptions {
  clock?: Clock;
  random?: Random;
  logger?: Logger;
  faults?: InProcessFaultKnobs;
  /** Backoff for a handler that throws instead of returning an outcome. */
  retryBaseMs?: number;
  retryMaxMs?: number;
  /** Store a repeated eventId once, like a broker's dedup window (default true; false in tests of consumer dedup). */
  dedupPublishes?: boolean;
}

interface Stored {
  seq: number;
  subject: string;
  body: string;
  messageId: string | undefined;
}

interface Durable {
  name: string;
  subjects: string[];
  maxDeliveries: number;
  concurrency: number;
  handler: DeliveryHandler | undefined;
  ready: { seq: number; extra: boolean }[];
  attempts: Map<number, number>;
  settled: Set<number>;
  inFlight: number;
  /** Deliveries waiting on a timer (an injected delay, or the delay of a nak) before they are ready. */
  delayed: number;
  idleWaiters: (() => void)[];
  settledWaiters: (() => void)[];
}

/**
 * The embedded transport: an in-memory, durable-per-name log with at-least-once delivery,
 * explicit ack/nak/term, redelivery with backoff, and dedup of published ids (like a broker's
 * dedup window, here unbounded). Nothing survives the process: use it for one-process
 * deployments whose journal is the source of truth (the relay republishes what is not done).
 */
export class InProcessTransport implements Transport {
  readonly name = "in-process";
  private readonly clock: Clock;
  private readonly random: Random;
  private readonly logger: Logger;
  private readonly knobs: InProcessFaultKnobs;
  private readonly retryBaseMs: number;
  private readonly retryMaxMs: number;
  private readonly dedupPublishes: boolean;
  private readonly log: Stored[] = [];
  private readonly published = new Set<string>();
  private readonly durables = new Map<string, Durable>();
  private buffer: Stored[] = [];
  private timers = 0;
  private closed = false;
  /**
   * Test and demo aids, with no series: this transport has no registry, and what an operator
   * watches is counted where it happens: what the relay publishes (`oncely_relay_published_total`)
   * and what consumers make of each delivery, duplicates included (`oncely_consumer_messages_total`).
   * `duplicatesInjected` counts the `duplicateRate` knob's extra copies.
   */
  readonly stats = { published: 0, deduplicated: 0, deliveries: 0, duplicatesInjected: 0 };

  constructor(options: InProcessTransportOptions = {}) {
    // `faults` here are delivery knobs, not fault points: the environment takes the rest.
    const env = resolveEnvironment({ clock: options.clock, random: options.random, logger: options.logger });
    this.clock = env.clock;
    this.random = env.random;
    this.logger = env.logger;
    this.knobs = options.faults ?? {};
    this.retryBaseMs = options.retryBaseMs ?? MESSAGING_DEFAULTS.inProcessRetryBaseMs;
    this.retryMaxMs = options.retryMaxMs ?? MESSAGING_DEFAULTS.inProcessRetryMaxMs;
    this.dedupPublishes = options.dedupPublishes ?? true;
  }

  async publish(envelope: Envelope, subject: string): Promise<void> {
    if (this.closed) throw new Error("in-process transport is closed");
    this.publishRaw(subject, encodeEnvelope(envelope), brokerMessageId(envelope));
  }

  /** Publish any body, e.g. a malformed one in a test. A given messageId is deduplicated. */
  publishRaw(subject: string, body: string, messageId?: string): void {
    if (messageId !== undefined && this.dedupPublishes) {
      if (this.published.has(messageId)) {
        this.stats.deduplicated++;
        return;
      }
      this.published.add(messageId);
    }
    const stored: Stored = { seq: this.log.length + 1, subject, body, messageId };
    this.log.push(stored);
    this.stats.published++;
    const window = this.knobs.reorderWindow ?? 0;
    if (window <= 1) {
      this.route(stored);
      return;
    }
    this.buffer.push(stored);
    if (this.buffer.length >= window) this.flush();
    else if (this.buffer.length === 1) setImmediate(() => this.flush());
  }

  private flush(): void {
    const batch = this.buffer;
    this.buffer = [];
    for (let i = batch.length - 1; i > 0; i--) {
      const j = Math.floor(this.random.next() * (i + 1));
      [batch[i], batch[j]] = [batch[j] as Stored, batch[i] as Stored];
    }
    for (const stored of batch) this.route(stored);
  }

  private route(stored: Stored): void {
    for (const durable of this.durables.values()) {
      if (durable.subjects.some((p) => subjectMatches(p, stored.subject))) this.enqueue(durable, stored.seq, false);
    }
  }

  private enqueue(durable: Durable, seq: number, extra: boolean, delayMs = 0): void {
    const jitter = this.knobs.maxDelayMs ? Math.floor(this.random.next() * this.knobs.maxDelayMs) : 0;
    const wait = delayMs + jitter;
    if (wait <= 0) {
      durable.ready.push({ seq, extra });
      this.pump(durable);
      return;
    }
    this.timers++;
    durable.delayed++;
    this.clock.sleep(wait).then(() => {
      this.timers--;
      durable.delayed--;
      durable.ready.push({ seq, extra });
      this.pump(durable);
    });
  }

  async subscribe(consumerName: string, options: SubscribeOptions, handler: DeliveryHandler): Promise<Subscription> {
    let durable = this.durables.get(consumerName);
    if (!durable) {
      durable = {
        name: consumerName,
        subjects: options.subjects,
        maxDeliveries: options.maxDeliveries ?? MESSAGING_DEFAULTS.maxDeliveries,
        concurrency: options.concurrency ?? MESSAGING_DEFAULTS.concurrency,
        handler: undefined,
        ready: [],
        attempts: new Map(),
        settled: new Set(),
        inFlight: 0,
        delayed: 0,
        idleWaiters: [],
        settledWaiters: [],
      };
      this.durables.set(consumerName, durable);
      // A new durable starts at the beginning of the log, like a JetStream consumer with deliver_policy all.
      for (const stored of this.log) {
        if (!this.buffer.includes(stored) && options.subjects.some((p) => subjectMatches(p, stored.subject))) {
          this.enqueue(durable, stored.seq, false);
        }
      }
    } else {
      durable.subjects = options.subjects;
      durable.maxDeliveries = options.maxDeliveries ?? durable.maxDeliveries;
      durable.concurrency = options.concurrency ?? durable.concurrency;
    }
    if (durable.handler) throw new Error(`consumer "${consumerName}" already has an active subscription`);
    durable.handler = handler;
    this.pump(durable);
    const d = durable;
    return {
      stop: async () => {
        if (d.handler === handler) d.handler = undefined;
        await this.whenSettled(d);
      },
      pending: async () => this.pending(d),
    };
  }

  private pump(durable: Durable): void {
    while (durable.handler && durable.inFlight < durable.concurrency && durable.ready.length > 0) {
      const item = durable.ready.shift() as { seq: number; extra: boolean };
      if (durable.settled.has(item.seq) && !item.extra) continue;
      this.deliver(durable, durable.handler, item.seq);
    }
    this.notifyIdle(durable);
  }

  private deliver(durable: Durable, handler: DeliveryHandler, seq: number): void {
    const stored = this.log[seq - 1] as Stored;
    const attempt = (durable.attempts.get(seq) ?? 0) + 1;
    durable.attempts.set(seq, attempt);
    durable.inFlight++;
    this.stats.deliveries++;
    const delivery: Delivery = {
      subject: stored.subject,
      body: stored.body,
      messageId: stored.messageId,
      attempt,
      maxDeliveries: durable.maxDeliveries,
    };
    const rate = this.knobs.duplicateRate ?? 0;
    if (rate > 0 && this.random.next() < rate) {
      this.stats.duplicatesInjected++;
      this.enqueue(durable, seq, true);
    }
    handler(delivery)
      .catch((error): DeliveryOutcome => {
        this.logger.warn({ consumer: durable.name, seq, err: error }, "handler threw; will redeliver");
        return { kind: "nak", delayMs: backoffMs(attempt, this.retryBaseMs, this.retryMaxMs) };
      })
      .then((outcome) => {
        durable.inFlight--;
        if (durable.inFlight === 0) for (const resolve of durable.settledWaiters.splice(0)) resolve();
        if (outcome.kind === "nak") {
          // Never dropped: the subscriber decides when a message is poison (it dead-letters it and
          // acks); a nak means "not now", e.g. while its journal is unreachable.
          if (!durable.settled.has(seq)) this.enqueue(durable, seq, false, outcome.delayMs);
        } else {
          durable.settled.add(seq);
        }
        this.pump(durable);
      });
  }

  /** Deliveries left for a durable: handling, ready, delayed, or still in the reorder buffer. */
  private pending(durable: Durable): number {
    const ready = durable.ready.filter((item) => item.extra || !durable.settled.has(item.seq)).length;
    const buffered = this.buffer.filter((stored) =>
      durable.subjects.some((p) => subjectMatches(p, stored.subject)),
    ).length;
    return durable.inFlight + durable.delayed + ready + buffered;
  }

  private busy(durable: Durable): boolean {
    return durable.inFlight > 0 || (durable.handler !== undefined && durable.ready.length > 0);
  }

  private notifyIdle(durable: Durable): void {
    if (this.busy(durable) || this.timers > 0 || this.buffer.length > 0) return;
    const waiters = durable.idleWaiters.splice(0);
    for (const resolve of waiters) resolve();
  }

  private whenSettled(durable: Durable): Promise<void> {
    if (durable.inFlight === 0) return Promise.resolve();
    return new Promise<void>((resolve) => durable.settledWaiters.push(resolve));
  }

  /**
   * Resolves when nothing is buffered, waiting on a timer, in flight, or ready for an active
   * subscription. For tests and the demo; with a simulated clock, advance it for delayed messages.
   */
  async idle(): Promise<void> {
    for (;;) {
      await new Promise<void>((resolve) => setImmediate(resolve));
      const durables = [...this.durables.values()];
      if (this.timers === 0 && this.buffer.length === 0 && !durables.some((d) => this.busy(d))) return;
      await new Promise<void>((resolve) => {
        const busy = durables.find((d) => this.busy(d));
        if (busy) busy.idleWaiters.push(resolve);
        else setTimeout(resolve, 1);
      });
    }
  }

  /** Messages published so far (a test inspects them). */
  get size(): number {
    return this.log.length;
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const durable of this.durables.values()) durable.handler = undefined;
    await Promise.all([...this.durables.values()].map((d) => this.whenSettled(d)));
  }
}
