import type { OutboxRow, Settlement } from "oncely";
import { InvalidInputError } from "oncely";
import { EFFECT_KINDS } from "../ordering/effects.js";

/** The field a succeeded outcome of each kind must carry, or the order's decide refuses it forever. */
const RESULT_FIELD: Record<string, string> = {
  [EFFECT_KINDS.payment]: "paymentId",
  [EFFECT_KINDS.email]: "messageId",
  [EFFECT_KINDS.picklist]: "picklistId",
  [EFFECT_KINDS.refund]: "refundId",
};

/**
 * The shop's rule for an operator's settlement, checked by the admin API and the console before
 * it is recorded: a succeeded payment, email, picklist or refund names the provider's id.
 */
export function checkShopSettlement(effect: OutboxRow, settlement: Settlement): void {
  const field = RESULT_FIELD[effect.kind];
  if (settlement.outcome !== "succeeded" || field === undefined) return;
  const value = (settlement.result as Record<string, unknown> | null)?.[field];
  if (typeof value !== "string" || value === "") {
    throw new InvalidInputError("invalid settlement", [
      `result.${field}: a succeeded ${effect.kind} needs the provider's ${field} (a non-empty string)`,
    ]);
  }
}
