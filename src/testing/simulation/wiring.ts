import type { Journal } from "../../journal/types.js";

/** Where every run's simulated clock starts; a time before it was read from another clock. */
export const SIM_EPOCH = Date.UTC(2026, 0, 1);

/** The time a journal call carries, read from the caller's clock. */
function timeOf(method: string, args: unknown[]): unknown {
  if (method === "commit" || method === "claimOutbox") return (args[0] as { now?: unknown } | undefined)?.now;
  if (method === "updateOutbox") return args[3];
  return undefined;
}

/**
 * Checks the run tests what it claims: a worker built with its own clock (the system clock, not
 * `env.clock`) writes times outside the simulated ones, and its timers, leases and backoffs then
 * ignore simulated time, so the run would pass while testing nothing of what it drew. Cheap: one
 * comparison per journal call; reported once per run.
 */
export function clockGuard(now: () => number, report: (message: string) => void) {
  let reported = false;
  return (_journal: Journal, method: string, args: unknown[]): void => {
    const at = timeOf(method, args);
    if (reported || typeof at !== "number") return;
    if (at >= SIM_EPOCH && at <= now()) return;
    reported = true;
    report(
      `journal.${method} was called with time ${at}, outside the simulated clock (${SIM_EPOCH}..${now()}): ` +
        "a worker does not use the simulator's clock; build it with env.clock",
    );
  };
}
