import { FAULT_POINTS, type FaultPoint } from "../../../src/core/faults.js";

/** The crash-point matrix: every named fault point × every way a process can fail there. */

export const FAULT_MODES = ["throw", "kill", "pg-terminate"] as const;
export type FaultMode = (typeof FAULT_MODES)[number];

export const MODE_DESCRIPTIONS: Record<FaultMode, string> = {
  throw: "the point throws once (in-process); the shop goes on",
  kill: "a child worker process is killed with SIGKILL at the point, then started again",
  "pg-terminate": "every PostgreSQL connection of the shop is terminated (pg_terminate_backend) at the point",
};

/**
 * The points the reference shop passes through on its way from order to completion. A cell for a
 * point in this list fails unless its fault really fired there; the others are listed as not on
 * the shop's path (the library's own tests cover them).
 */
export const SHOP_FAULT_POINTS: readonly FaultPoint[] = [
  "command.accepted",
  "commit.before",
  "commit.after",
  "dispatch.beforeHandler",
  "dispatch.afterProvider",
  "dispatch.outcomeCommitted",
  // Fulfillment's StartShipping to the shipment actor is an actor-to-actor message.
  "delivery.inboxRecorded",
  // The order timeline is a sequenced consumer.
  "consumer.checkpointStored",
  // Every context publishes through the relay.
  "relay.published",
];

export { FAULT_POINTS };
