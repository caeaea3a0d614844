export { connectNats } from "./connection.js";
export type { NatsPartitions } from "./partitions.js";
export { type DurableSetup, ensureDurable, ensureStream, NatsSetupError, type StreamSetup } from "./setup.js";
export { PullLoop } from "./subscription.js";
// One way to build it: `natsTransport(...)` (it connects JetStream first); the class is exported as a type.
export { type NatsTransport, type NatsTransportOptions, natsTransport } from "./transport.js";
