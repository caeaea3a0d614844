import type { EffectOutcome } from "../core/decider.js";
import type { EffectStatus } from "./types.js";

const RANK: Record<EffectStatus, number> = { NotRequested: 0, Pending: 1, Unknown: 2, Completed: 3, Failed: 3 };

/** Completed and Failed are final: no outcome, duplicate or late, changes them. */
export const isFinalStatus = (status: EffectStatus): boolean => status === "Completed" || status === "Failed";

/**
 * The status machine for one effect key, for users' `evolve` functions:
 * `NotRequested → Pending → Completed | Failed | Unknown`, `Unknown → Completed | Failed`.
 * Monotonic: a final status never changes, and nothing moves back to Pending or NotRequested,
 * so a replayed, duplicated or reordered outcome can never roll the state back.
 *
 * @example
 * case "PaymentCompleted": return { ...state, payment: effectStatusAfter(state.payment, "Completed") };
 */
export function effectStatusAfter(current: EffectStatus, next: EffectStatus): EffectStatus {
  if (isFinalStatus(current)) return current;
  return RANK[next] > RANK[current] ? next : current;
}

/** The status an effect outcome command leads to, or undefined for message outcomes. */
export function statusOfOutcome(command: EffectOutcome): EffectStatus | undefined {
  switch (command.type) {
    case "oncely.effect.succeeded":
      return "Completed";
    case "oncely.effect.failed":
      return "Failed";
    case "oncely.effect.unknown":
    case "oncely.effect.needs-reconciliation":
      return "Unknown";
    default:
      return undefined;
  }
}
