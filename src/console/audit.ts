import { CONSOLE_DEFAULTS } from "../base/defaults.js";
import type { Clock, IdGenerator } from "../core/clock.js";
import type { Journal } from "../journal/types.js";

/** Documents collection of the operator actions taken in the console (queryable with `journal.listDocuments`). */
export const OPERATOR_ACTIONS = "oncely.operator-actions";

export interface OperatorAction {
  id: string;
  at: number;
  /** Who did it, as the operator named themself (the token says they may; the name says who). */
  by: string;
  action: "settle" | "retry" | "replay" | "discard";
  /** The effect key or the dead letter id. */
  target: string;
  /** What came of it: `succeeded`/`failed` for a settle, `retrying` for a retry, the consumer's outcome for a replay. */
  outcome: string;
  note: string | null;
}

/**
 * Records an operator action after it took effect. Failure window: a crash between the action's
 * commit and this one loses the audit entry, never the action (a settlement also carries `by` in
 * the owner's event).
 */
export async function recordAction(
  journal: Journal,
  clock: Clock,
  ids: IdGenerator,
  action: Omit<OperatorAction, "id" | "at">,
): Promise<OperatorAction> {
  const at = clock.now();
  const record: OperatorAction = { id: `${at.toString().padStart(15, "0")}-${ids.next()}`, at, ...action };
  await journal.commit({ documents: [{ collection: OPERATOR_ACTIONS, id: record.id, doc: record }], now: at });
  return record;
}

/** The latest actions first. */
export async function listActions(
  journal: Journal,
  limit: number = CONSOLE_DEFAULTS.pageSize,
): Promise<OperatorAction[]> {
  const docs = await journal.listDocuments(OPERATOR_ACTIONS, CONSOLE_DEFAULTS.streamScanLimit);
  return docs
    .map((d) => d.doc as OperatorAction)
    .sort((a, b) => b.at - a.at || (a.id < b.id ? 1 : -1))
    .slice(0, limit);
}
