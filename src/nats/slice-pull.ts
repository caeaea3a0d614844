import type { JetStreamManager } from "@nats-io/jetstream";
import type { Msg, NatsConnection, Subscription as NatsSubscription } from "@nats-io/transport-node";
import type { Logger } from "../core/logger.js";
import type { Ownership } from "../core/slices.js";
import type { SliceReaderMetrics } from "../messaging/slice-metrics.js";
import {
  backoffMs,
  type Delivery,
  type DeliveryHandler,
  type DeliveryOutcome,
  type Subscription,
} from "../messaging/transport.js";
import { natsNode } from "./driver.js";

const { createInbox, nanos } = natsNode;

export interface SlicePullOptions {
  nc: NatsConnection;
  jsm: JetStreamManager;
  stream: string;
  consumer: string;
  ownership: Ownership;
  /** The durable of one slice, created (or updated) before it is read. */
  ensureDurable: (slice: number) => Promise<string>;
  /** The subject a subscriber sees, from the wire subject. */
  logicalSubject: (wire: string) => string;
  handler: DeliveryHandler;
  maxDeliveries: number;
  concurrency: number;
  ackWaitMs: number;
  logger: Logger;
  retryBaseMs: number;
  retryMaxMs: number;
  metrics: SliceReaderMetrics;
  /** How long one pull request waits on the server (default 30 s): an idle slice costs one request per period. */
  expiresMs?: number;
}

interface SliceState {
  slice: number;
  durable: string;
  /** Messages the open pull request may still bring (0: none open). */
  credit: number;
  /** When the open pull request was sent (a lost one is sent again after `expiresMs`). */
  sentAt: number;
  active: boolean;
  inFlight: Set<Promise<void>>;
}

/**
 * One subscription's reader of the durables of the slices its worker owns, one durable per slice
 * (`<consumer>-s<slice>`, NATS 2.9 allows one filter subject per durable). All of them are read
 * through ONE inbox subscription: each owned slice has one pull request open on the server, whose
 * replies come to `<inbox>.<slice>`, and which the server ends by itself after `expiresMs` (a 408),
 * when it is sent again. So an idle worker costs no client timer per slice: one sweep timer per
 * subscription re-sends a request lost with a connection, and `working()` is reported only for
 * messages being handled. Messages are handled `concurrency` at a time, in arrival order, and
 * acknowledged after the handler resolved.
 *
 * Ownership: a gained slice's durable is created if need be and pulled (the durable's ack floor is
 * where the previous owner left it); a lost slice is no longer pulled, what it had received and not
 * started is nak'ed at once (so the next owner gets it without waiting for `ack_wait`), and the
 * ownership's `settleWith` waits for its handlers running. Failure window: the lost slice's open
 * pull request lives on the server until it expires, and what it brings meanwhile is nak'ed back
 * (one more delivery counted each); a message handled and acked by the old owner after the move is
 * acked once, a message whose ack is lost is redelivered to the new owner after `ack_wait`, where
 * the inbox answers it.
 */
export class SlicePull implements Subscription {
  private readonly slices = new Map<number, SliceState>();
  private readonly byDurable = new Map<string, SliceState>();
  private readonly queue: { state: SliceState; msg: Msg }[] = [];
  private running = 0;
  private readonly inbox: string;
  private readonly sub: NatsSubscription;
  private readonly sweep: ReturnType<typeof setInterval>;
  private readonly expiresMs: number;
  private readonly batch: number;
  private stopped = false;
  private readonly unsubscribes: (() => void)[] = [];
  private readonly transitions = new Map<number, Promise<void>>();

  private constructor(private readonly o: SlicePullOptions) {
    this.expiresMs = o.expiresMs ?? 30_000;
    this.batch = Math.max(1, o.concurrency);
    this.inbox = createInbox();
    this.sub = o.nc.subscribe(`${this.inbox}.*`, {
      callback: (error, msg) => {
        if (!error) this.received(msg);
      },
    });
    this.sweep = setInterval(() => this.resendLost(), Math.max(1000, Math.floor(this.expiresMs / 2)));
    this.sweep.unref?.();
  }

  static async start(options: SlicePullOptions): Promise<SlicePull> {
    const pull = new SlicePull(options);
    const owned: number[] = [];
    for (let slice = 0; slice < options.ownership.sliceCount; slice++)
      if (options.ownership.owns(slice)) owned.push(slice);
    await Promise.all(owned.map((slice) => pull.sync(slice)));
    pull.unsubscribes.push(options.ownership.onChange(() => pull.reconcile()));
    const unregister = options.ownership.settleWith?.((slice) => pull.sync(slice));
    if (unregister) pull.unsubscribes.push(unregister);
    pull.watchStatus();
    return pull;
  }

  private watchStatus(): void {
    void (async () => {
      for await (const status of this.o.nc.status()) {
        if (this.stopped) return;
        // Pull requests open before a disconnect are gone with the old server connection.
        if (status.type === "reconnect") for (const state of this.slices.values()) this.pull(state, true);
      }
    })().catch(() => {});
  }

  private reconcile(): void {
    if (this.stopped) return;
    for (let slice = 0; slice < this.o.ownership.sliceCount; slice++) {
      if (this.o.ownership.owns(slice) !== this.slices.has(slice)) void this.sync(slice);
    }
  }

  /** Bring one slice in line with the ownership (one change at a time per slice). */
  private sync(slice: number): Promise<void> {
    const previous = this.transitions.get(slice) ?? Promise.resolve();
    const next = previous
      .then(async () => {
        const owns = !this.stopped && this.o.ownership.owns(slice);
        const state = this.slices.get(slice);
        if (owns && !state) await this.gain(slice);
        else if (!owns && state) await this.lose(state);
      })
      .catch((error) => this.o.logger.warn({ consumer: this.o.consumer, slice, err: error }, "moving a slice failed"))
      .finally(() => {
        if (this.transitions.get(slice) === next) this.transitions.delete(slice);
      });
    this.transitions.set(slice, next);
    return next;
  }

  private async gain(slice: number): Promise<void> {
    const durable = await this.o.ensureDurable(slice);
    if (this.stopped || !this.o.ownership.owns(slice)) return;
    const state: SliceState = { slice, durable, credit: 0, sentAt: 0, active: true, inFlight: new Set() };
    this.slices.set(slice, state);
    this.byDurable.set(durable, state);
    this.o.metrics.moves.inc({ transport: "nats", consumer: this.o.consumer, change: "gained" });
    this.pull(state);
  }

  private async lose(state: SliceState): Promise<void> {
    state.active = false;
    this.slices.delete(state.slice);
    this.byDurable.delete(state.durable);
    const waiting = this.releaseQueued(state);
    const running = state.inFlight.size;
    if (waiting + running > 0) {
      this.o.metrics.stoppedInFlight.inc({ transport: "nats", consumer: this.o.consumer });
      this.o.logger.warn(
        { consumer: this.o.consumer, slice: state.slice, waiting, running },
        "stopped reading a slice with messages in flight; the waiting ones were nak'ed for its next owner",
      );
    }
    await Promise.all([...state.inFlight]);
    this.o.metrics.moves.inc({ transport: "nats", consumer: this.o.consumer, change: "lost" });
  }

  /** Nak the messages of a slice received and not started (all, without a state): its next reader gets them now. */
  private releaseQueued(state?: SliceState): number {
    let count = 0;
    for (let i = this.queue.length - 1; i >= 0; i--) {
      const item = this.queue[i] as (typeof this.queue)[number];
      if (state && item.state !== state) continue;
      this.queue.splice(i, 1);
      this.settle(item.msg, { kind: "nak", delayMs: 0 });
      count++;
    }
    return count;
  }

  /** Open a pull request for a slice unless one is open (or `force`: the open one is known lost). */
  private pull(state: SliceState, force = false): void {
    if (this.stopped || !state.active || (state.credit > 0 && !force)) return;
    // Back-pressure: a slice asks for more only while fewer than two batches wait for a handler.
    if (this.queue.length >= this.batch * 2) return;
    state.credit = this.batch;
    state.sentAt = Date.now();
    try {
      this.o.nc.publish(
        `$JS.API.CONSUMER.MSG.NEXT.${this.o.stream}.${state.durable}`,
        JSON.stringify({ batch: this.batch, expires: nanos(this.expiresMs) }),
        { reply: `${this.inbox}.${state.slice}` },
      );
    } catch (error) {
      state.credit = 0;
      this.o.logger.warn({ durable: state.durable, err: error }, "pull request failed; the sweep sends it again");
    }
  }

  /** The sweep: a request open for longer than the server keeps one was lost (a reconnect, a restart). */
  private resendLost(): void {
    const now = Date.now();
    for (const state of this.slices.values()) {
      if (state.credit === 0 || now - state.sentAt > this.expiresMs + 5000) this.pull(state, true);
    }
  }

  private received(msg: Msg): void {
    // A message keeps its stream subject; its ack subject names the durable, so the slice. A status
    // comes on the request's reply subject, `<inbox>.<slice>`.
    const durable = msg.reply?.startsWith("$JS.ACK.") ? durableOfAck(msg.reply) : undefined;
    const state =
      durable === undefined
        ? this.slices.get(Number(msg.subject.slice(this.inbox.length + 1)))
        : this.byDurable.get(durable);
    const slice = state?.slice;
    const code = msg.headers?.code ?? 0;
    if (durable === undefined || code >= 100) {
      // A status: 408 (the request expired), 404, 409 (limits, the durable deleted or moved).
      if (code === 100) return;
      if (state) {
        state.credit = 0;
        if (code === 408) this.pull(state);
        else if (code !== 404)
          this.o.logger.warn({ durable: state.durable, code, status: msg.headers?.description }, "pull ended");
      }
      return;
    }
    if (state) state.credit = Math.max(0, state.credit - 1);
    if (!state?.active) {
      // Brought by the request of a slice let go: back to the durable for its new owner.
      this.settle(msg, { kind: "nak", delayMs: 0 });
      return;
    }
    this.o.metrics.read.inc({ transport: "nats", consumer: this.o.consumer, slice: slice as number });
    this.queue.push({ state, msg });
    this.drain();
    if (state.credit === 0) this.pull(state);
  }

  private drain(): void {
    while (this.running < this.o.concurrency && this.queue.length > 0 && !this.stopped) {
      const { state, msg } = this.queue.shift() as (typeof this.queue)[number];
      this.running++;
      const task = this.handle(state, msg).finally(() => {
        this.running--;
        state.inFlight.delete(task);
        this.drain();
        // Room again: slices held back by the back-pressure ask for more.
        if (this.queue.length < this.batch) for (const s of this.slices.values()) if (s.credit === 0) this.pull(s);
      });
      state.inFlight.add(task);
    }
  }

  private async handle(state: SliceState, msg: Msg): Promise<void> {
    const delivery: Delivery = {
      subject: this.o.logicalSubject(msg.subject),
      body: msg.string(),
      messageId: msg.headers?.get("Nats-Msg-Id") || undefined,
      attempt: deliveryCount(msg.reply as string),
      maxDeliveries: this.o.maxDeliveries,
    };
    const inProgress = setInterval(() => this.respond(msg, "+WPI"), Math.max(50, Math.floor(this.o.ackWaitMs / 3)));
    let outcome: DeliveryOutcome;
    try {
      outcome = await this.o.handler(delivery);
    } catch (error) {
      this.o.logger.warn({ durable: state.durable, subject: msg.subject, err: error }, "handler threw; nak");
      outcome = { kind: "nak", delayMs: backoffMs(delivery.attempt, this.o.retryBaseMs, this.o.retryMaxMs) };
    } finally {
      clearInterval(inProgress);
    }
    this.settle(msg, outcome);
  }

  private settle(msg: Msg, outcome: DeliveryOutcome): void {
    if (outcome.kind === "ack") this.respond(msg, "+ACK");
    else if (outcome.kind === "nak") this.respond(msg, `-NAK ${JSON.stringify({ delay: nanos(outcome.delayMs) })}`);
    else this.respond(msg, "+TERM");
  }

  private respond(msg: Msg, body: string): void {
    try {
      msg.respond(body);
    } catch (error) {
      // Connection gone: the server redelivers after ack_wait; the inbox makes that harmless.
      this.o.logger.warn({ consumer: this.o.consumer, err: error }, "could not settle message");
    }
  }

  /** Messages left in the owned slices' durables (`num_pending` + `num_ack_pending`), and those received here not started. */
  async pending(): Promise<number> {
    const infos = await Promise.all(
      [...this.slices.values()].map((state) => this.o.jsm.consumers.info(this.o.stream, state.durable)),
    );
    return infos.reduce((sum, info) => sum + info.num_pending + info.num_ack_pending, 0);
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    for (const unsubscribe of this.unsubscribes.splice(0)) unsubscribe();
    clearInterval(this.sweep);
    await Promise.all([...this.transitions.values()]);
    this.releaseQueued();
    await Promise.all([...this.slices.values()].flatMap((state) => [...state.inFlight]));
    this.sub.unsubscribe();
  }
}

/**
 * The durable (`durableOfAck`) and the delivery count in a JetStream ack subject: `$JS.ACK.<stream>.<consumer>.<delivered>...` (9
 * tokens), or with a domain and account hash first (12 or more).
 */
export function durableOfAck(reply: string): string | undefined {
  const tokens = reply.split(".");
  return tokens.length === 9 ? tokens[3] : tokens[5];
}

export function deliveryCount(reply: string): number {
  const tokens = reply.split(".");
  const count = Number(tokens.length === 9 ? tokens[4] : tokens[6]);
  return Number.isInteger(count) && count > 0 ? count : 1;
}
