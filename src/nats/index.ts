export { connectNats } from "./connection.js";
export type { NatsPartitions } from "./partitions.js";
export { type DurableSetup, ensureDurable, ensureStream, NatsSetupError, type StreamSetup } from "./setup.js";
export { PullLoop } from "./subscription.js";
export { NatsTransport, type NatsTransportOptions, natsTransport } from "./transport.js";
