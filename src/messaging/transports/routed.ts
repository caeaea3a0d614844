import { InvalidInputError } from "../../base/errors.js";
import type { Envelope } from "../envelope.js";
import type { DeliveryHandler, SubscribeOptions, Subscription, Transport } from "../transport.js";

export interface RoutedTransportOptions {
  /** The transport each source publishes through (e.g. a NATS connection as that context's user). */
  publishers: Readonly<Record<string, Transport>>;
  /** The transport each durable consumer subscribes through, by consumer name. */
  subscribers: Readonly<Record<string, Transport>>;
}

/**
 * One `Transport` over several, so that each context of a process talks to the broker under its
 * own identity: an envelope is published through its `source`'s transport, a consumer subscribes
 * through its own. With broker permissions per identity, a context can then publish only on its
 * own subjects, whatever bug or intruder is inside the process's other contexts.
 * A source or consumer without a transport is refused with an error naming it (never a fallback
 * that would publish under another identity).
 */
export class RoutedTransport implements Transport {
  readonly name = "routed";

  constructor(private readonly o: RoutedTransportOptions) {}

  publish(envelope: Envelope, subject: string): Promise<void> {
    const transport = Object.hasOwn(this.o.publishers, envelope.source)
      ? this.o.publishers[envelope.source]
      : undefined;
    if (!transport)
      return Promise.reject(new InvalidInputError(`no transport publishes for source "${envelope.source}"`));
    return transport.publish(envelope, subject);
  }

  subscribe(consumerName: string, options: SubscribeOptions, handler: DeliveryHandler): Promise<Subscription> {
    const transport = Object.hasOwn(this.o.subscribers, consumerName) ? this.o.subscribers[consumerName] : undefined;
    if (!transport)
      return Promise.reject(new InvalidInputError(`no transport subscribes for consumer "${consumerName}"`));
    return transport.subscribe(consumerName, options, handler);
  }

  /** Closes each underlying transport once. */
  async close(): Promise<void> {
    const all = new Set([...Object.values(this.o.publishers), ...Object.values(this.o.subscribers)]);
    await Promise.all([...all].map((t) => t.close()));
  }
}
