import type { NatsConnection, NodeConnectionOptions } from "@nats-io/transport-node";
import { natsNode } from "./driver.js";

const { connect } = natsNode;

/**
 * A connection that never gives up reconnecting: after a broker restart nats.js reconnects by
 * itself and the transport's consume loops restart their pulls (see `subscription.ts`).
 *
 * `noAsyncTraces` by default: otherwise nats.js builds an Error, stack trace and all, for every
 * request it sends (each JetStream publish is one) to name the call site should it time out. The
 * transport names what failed itself (subject, message id); pass `noAsyncTraces: false` to get the
 * traces back while debugging.
 */
export function connectNats(
  servers: string | string[],
  options: Partial<NodeConnectionOptions> = {},
): Promise<NatsConnection> {
  return connect({
    servers,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 250,
    waitOnFirstConnect: false,
    noAsyncTraces: true,
    ...options,
  });
}
