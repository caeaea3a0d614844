import type * as JetStream from "@nats-io/jetstream";
import type * as NatsNode from "@nats-io/transport-node";
import { requireDriver } from "../core/require-driver.js";

/** The NATS clients, loaded when `oncely/nats` is imported; a missing one says to install it. */
export const natsNode: typeof NatsNode = requireDriver("@nats-io/transport-node", "oncely/nats");
export const jetStreamClient: typeof JetStream = requireDriver("@nats-io/jetstream", "oncely/nats");
