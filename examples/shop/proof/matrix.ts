import { FAULT_POINTS } from "oncely/testing";

/**
 * The crash-point matrix: every named fault point × every way a process can fail there. The
 * reference shop passes through all of the points (the relay, the sequenced timeline consumer and
 * Fulfillment's StartShipping message reach the last three), so every cell must really fire.
 */

export const FAULT_MODES = ["throw", "kill", "pg-terminate"] as const;
export type FaultMode = (typeof FAULT_MODES)[number];

export const MODE_DESCRIPTIONS: Record<FaultMode, string> = {
  throw: "the point throws once (in-process); the shop goes on",
  kill: "a child worker process is killed with SIGKILL at the point, then started again",
  "pg-terminate": "every PostgreSQL connection of the shop is terminated (pg_terminate_backend) at the point",
};

export { FAULT_POINTS };
