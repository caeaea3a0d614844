import type { NatsConnection, NodeConnectionOptions } from "@nats-io/transport-node";
import { natsNode } from "./driver.js";

const { connect } = natsNode;

/**
 * A connection that never gives up reconnecting: after a broker restart nats.js reconnects by
 * itself and the transport's consume loops restart their pulls (see `subscription.ts`).
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
    ...options,
  });
}
