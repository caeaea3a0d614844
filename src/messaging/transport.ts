import type { Ownership } from "../core/slices.js";
import type { Envelope } from "./envelope.js";

/**
 * What a transport hands to a subscriber: the raw body (it may not even be JSON: the consumer
 * decides, and dead-letters what does not parse) and delivery bookkeeping.
 */
export interface Delivery {
  subject: string;
  body: string;
  /** The broker's dedup id (`Nats-Msg-Id`): when published by oncely, `brokerMessageId(envelope)`. */
  messageId: string | undefined;
  /** 1 on the first delivery, counted by the broker across consumer restarts. */
  attempt: number;
  /** The attempt after which the subscriber must settle the message itself (dead letter, then ack). */
  maxDeliveries: number;
}

/**
 * The subscriber's verdict, transport-neutral:
 * - `ack`: handled (or deliberately dropped after being dead-lettered); never deliver again.
 * - `nak`: not handled; deliver again after `delayMs`.
 * - `term`: never deliver again, without saying it was handled (kept for brokers that record it).
 */
export type DeliveryOutcome = { kind: "ack" } | { kind: "nak"; delayMs: number } | { kind: "term"; reason: string };

/**
 * Called once per delivery. Throwing counts as `nak` with the transport's default backoff; the
 * ack is sent only after the returned promise resolves, i.e. after the subscriber's commit.
 */
export type DeliveryHandler = (delivery: Delivery) => Promise<DeliveryOutcome>;

export interface SubscribeOptions {
  /** Subject filters, NATS syntax (`shop.payment.*`, `shop.>`). */
  subjects: string[];
  /** Deliveries after which the subscriber settles the message itself (default 5). */
  maxDeliveries?: number;
  /** Messages handled at once by this subscription (default 16). Order per source is the consumer's job. */
  concurrency?: number;
  /**
   * The slices this worker owns (`createHost({ ownership })` passes its own): a transport that
   * partitions events by slice delivers this subscription only the events of those slices, and
   * follows the ownership as slices move (docs/design/event-partitions.md). Absent, or
   * `ownsEverything`: every event. A transport that does not partition ignores it.
   */
  ownership?: Ownership | undefined;
}

export interface Subscription {
  /** Stop taking new messages; waits for in-flight handlers. Unacked messages are redelivered later. */
  stop(): Promise<void>;
  /**
   * How many messages are left for this subscription now: in the transport's log past what it has
   * read, and read but not settled (being handled, waiting for a handler slot, or waiting to be
   * delivered again after a nak). 0 exactly when it has settled everything published so far; a
   * transport that cannot count a long backlog cheaply may report a part of it (never 0 for it).
   * One look at the broker or the journal per call: for `host.drain()` and tests, not a hot path.
   */
  pending(): Promise<number>;
}

/**
 * A broker for integration events. Durable: a subscription by consumer name resumes where that
 * name left off, and sees messages published before it first subscribed.
 * Delivery is at least once; publishing the same eventId twice within the dedup window stores it once.
 */
export interface Transport {
  readonly name: string;
  publish(envelope: Envelope, subject: string): Promise<void>;
  subscribe(consumerName: string, options: SubscribeOptions, handler: DeliveryHandler): Promise<Subscription>;
  close(): Promise<void>;
}

/** Exponential backoff with a cap: attempt 1 → base, 2 → 2·base, ... */
export function backoffMs(attempt: number, baseMs: number, maxMs: number): number {
  return Math.min(maxMs, baseMs * 2 ** Math.max(0, attempt - 1));
}
