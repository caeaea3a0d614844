import { effectStatusAfter, isFinalStatus } from "oncely";
import type { OrderEvent, Stage } from "./events.js";
import type { EffectFactState } from "./state.js";

/**
 * One outcome applied to one effect fact of the order (a mail's attempt, a refund), monotonic: a
 * final status is never left, Unknown never goes back to Pending.
 */
export function applyStage(
  fact: EffectFactState,
  stage: Exclude<Stage, "requested">,
  event: OrderEvent,
): EffectFactState {
  if (isFinalStatus(fact.status)) return fact;
  switch (stage) {
    case "completed":
      return {
        ...fact,
        status: "Completed",
        resultId: "messageId" in event ? event.messageId : "refundId" in event ? event.refundId : null,
        lastError: null,
        needsReconciliation: false,
      };
    case "failed":
      return {
        ...fact,
        status: "Failed",
        reason: "reason" in event ? event.reason : null,
        needsReconciliation: false,
      };
    case "unknown":
      return { ...fact, status: effectStatusAfter(fact.status, "Unknown"), lastError: errorOf(event) };
    case "reconcile":
      return {
        ...fact,
        status: effectStatusAfter(fact.status, "Unknown"),
        lastError: errorOf(event),
        needsReconciliation: true,
      };
  }
}

const errorOf = (event: OrderEvent): string | null => ("error" in event ? event.error : null);
