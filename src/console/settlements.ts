import type { Clock, IdGenerator } from "../core/clock.js";
import type { Reconciliation } from "../effects/reconciliation.js";
import { effectRowState } from "../effects/row-state.js";
import type { Settlement } from "../effects/types.js";
import type { DocumentReader, EventStore, OutboxReader, OutboxRow } from "../journal/types.js";
import { finalizeSettlement, type OperatorAction, recordAction, type SettlementState, settlementsOf } from "./audit.js";

const SETTLEMENT_REFUSED = "operator's settlement refused: ";

/**
 * What the effect's row says about the settlement last recorded on it. A settlement sets the row
 * `pending` with the decision on it; a dispatcher then delivers it (the owner's commit marks the
 * row done), sends it back to the queue with the reason (`reconcile`: a result the effect's
 * schema rejects), or leaves the row dead (the owner's `decide` rejected the outcome).
 */
export function stateOfRow(row: OutboxRow | undefined): SettlementState {
  // Only done rows are ever pruned, so a row that is gone was delivered.
  if (!row || row.status === "done") return { state: "recorded" };
  if (row.status === "reconcile" || row.status === "resolving") {
    const reason = row.lastError ?? "sent back to the reconciliation queue";
    return {
      state: "refused",
      reason: reason.startsWith(SETTLEMENT_REFUSED) ? reason.slice(SETTLEMENT_REFUSED.length) : reason,
    };
  }
  if (row.status === "dead") return { state: "refused", reason: row.lastError ?? "the owner rejected the outcome" };
  return { state: "waiting" };
}

/**
 * The final state of each settle action in `actions` (others map to nothing). An action with a
 * stored `final` keeps it; the latest settlement of a key is read from the key's row; an earlier
 * one without `final` was necessarily refused (the queue takes a second settlement only after
 * the first came back).
 */
export async function settlementStates(
  journal: Pick<OutboxReader, "getOutbox">,
  actions: readonly OperatorAction[],
): Promise<Map<string, SettlementState>> {
  const states = new Map<string, SettlementState>();
  const latestByKey = new Map<string, OperatorAction>();
  for (const a of actions) {
    if (a.action !== "settle") continue;
    const latest = latestByKey.get(a.target);
    if (!latest || a.at > latest.at || (a.at === latest.at && a.id > latest.id)) latestByKey.set(a.target, a);
  }
  for (const a of actions) {
    if (a.action !== "settle") continue;
    if (a.final) states.set(a.id, a.final);
    else if (latestByKey.get(a.target) === a) states.set(a.id, stateOfRow(await journal.getOutbox(a.target)));
    else states.set(a.id, { state: "refused", reason: "sent back before a later settlement of the same effect" });
  }
  return states;
}

export interface SettleOptions {
  /** Reads the row and earlier settlements; commits the operator action (the settlement itself goes through `reconciliation`). */
  journal: Pick<EventStore, "commit"> & Pick<OutboxReader, "getOutbox"> & Pick<DocumentReader, "listDocuments">;
  reconciliation: Reconciliation;
  clock: Clock;
  ids: IdGenerator;
  via: "console" | "cli";
}

/**
 * Settle through `Reconciliation.settle` and record the action in `oncely.operator-actions`, the
 * same way from the console and the CLI. Earlier settlements of the key get their final state
 * stored first (they were refused, or the queue would not take this one), so the reason they
 * were refused stays readable after this settlement replaces it on the row.
 */
export async function settleAndRecord(
  options: SettleOptions,
  key: string,
  settlement: Settlement,
): Promise<OperatorAction> {
  const { journal, clock } = options;
  const row = await journal.getOutbox(key);
  const previous = (await settlementsOf(journal, key)).filter((a) => !a.final);
  if (row && (row.status === "reconcile" || row.status === "resolving") && !effectRowState(row).pending) {
    for (const action of previous) await finalizeSettlement(journal, action, stateOfRow(row), clock.now());
  }
  await options.reconciliation.settle(key, settlement);
  return recordAction(journal, clock, options.ids, {
    by: settlement.by,
    action: "settle",
    target: key,
    outcome: settlement.outcome,
    note: settlement.note?.trim() || null,
    via: options.via,
  });
}

/** How a settle action reads on the Operator actions page, e.g. `succeeded: refused: result.paymentId: …`. */
export function describeSettlement(action: OperatorAction, state: SettlementState | undefined): string {
  if (!state) return action.outcome;
  if (state.state === "waiting") return `${action.outcome}: waiting for a dispatcher to deliver it`;
  if (state.state === "recorded") return `${action.outcome}: recorded by the owner`;
  return `${action.outcome}: refused: ${state.reason}`;
}
