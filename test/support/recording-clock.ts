import { type Clock, systemClock } from "../../src/core/clock.js";

/** The system clock without `timer` (every wait is a `sleep`), recording why each sleep was cut short. */
export function cancelRecordingClock(): { clock: Clock; reasons: unknown[] } {
  const reasons: unknown[] = [];
  const clock: Clock = {
    now: () => Date.now(),
    sleep: (ms, signal) => {
      signal?.addEventListener("abort", () => reasons.push(signal.reason), { once: true });
      return systemClock.sleep(ms, signal);
    },
  };
  return { clock, reasons };
}
