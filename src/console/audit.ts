import { CONSOLE_DEFAULTS } from "../base/defaults.js";
import type { Clock, IdGenerator } from "../core/clock.js";
import type { DocumentReader, EventStore } from "../journal/types.js";

/**
 * Documents collection of every operator action, taken in the console or with the `oncely` CLI
 * (queryable with `journal.listDocuments`); the console's Operator actions page reads it.
 */
export const OPERATOR_ACTIONS = "oncely.operator-actions";

/**
 * What became of a settlement after it was recorded on the effect's row: a dispatcher delivers
 * it to the owner (`recorded`), or refuses it (a result the effect's schema rejects goes back to
 * the queue; an owner whose `decide` rejects the outcome leaves the row dead).
 */
export type SettlementState = { state: "waiting" } | { state: "recorded" } | { state: "refused"; reason: string };

export interface OperatorAction {
  id: string;
  at: number;
  /** Who did it, as the operator named themself (the token says they may; the name says who). */
  by: string;
  action: "settle" | "retry" | "replay" | "discard" | "revive" | "skip-gap" | "supply-gap";
  /**
   * The effect key or the dead letter id; for a gap action `<consumer>|<source>` (skip) or
   * `<consumer>|<source>@<version>` (supply).
   */
  target: string;
  /**
   * What was done: `succeeded`/`failed` for a settle (what the operator said; its fate is
   * `final`, or read from the effect's row), `retrying` for a retry, the consumer's outcome for a
   * replay, `discarded`, `revived`, `skipped <from>..<to>` for a skipped gap, `parked <eventId>`
   * for a supplied gap event (the consumer's next gap check applies it).
   */
  outcome: string;
  note: string | null;
  /** Where it was taken. */
  via?: "console" | "cli" | undefined;
  /** Revive: the error the row had when it was revived (why it had gone dead). */
  previousError?: string | null | undefined;
  /**
   * Settle: its final state, written once known (when the next settlement of the same key is
   * taken, which the queue allows only after this one came back refused). Until then the state
   * is read from the effect's row.
   */
  final?: SettlementState | undefined;
}

export type NewOperatorAction = Omit<OperatorAction, "id" | "at">;

/**
 * Records an operator action. Failure window: a crash between the action's commit and this one
 * loses the audit entry, never the action (a settlement also carries `by` in the owner's event).
 */
export async function recordAction(
  journal: Pick<EventStore, "commit">,
  clock: Clock,
  ids: IdGenerator,
  action: NewOperatorAction,
): Promise<OperatorAction> {
  const at = clock.now();
  const record: OperatorAction = { id: `${at.toString().padStart(15, "0")}-${ids.next()}`, at, ...action };
  await journal.commit({ documents: [{ collection: OPERATOR_ACTIONS, id: record.id, doc: record }], now: at });
  return record;
}

/** Every recorded action, latest first (at most the console's scan limit). */
async function allActions(journal: Pick<DocumentReader, "listDocuments">): Promise<OperatorAction[]> {
  const docs = await journal.listDocuments(OPERATOR_ACTIONS, CONSOLE_DEFAULTS.streamScanLimit);
  return docs.map((d) => d.doc as OperatorAction).sort((a, b) => b.at - a.at || (a.id < b.id ? 1 : -1));
}

/** The latest actions first. */
export async function listActions(
  journal: Pick<DocumentReader, "listDocuments">,
  limit: number = CONSOLE_DEFAULTS.pageSize,
): Promise<OperatorAction[]> {
  return (await allActions(journal)).slice(0, limit);
}

/** The settle actions of one effect key, latest first. */
export async function settlementsOf(
  journal: Pick<DocumentReader, "listDocuments">,
  key: string,
): Promise<OperatorAction[]> {
  return (await allActions(journal)).filter((a) => a.action === "settle" && a.target === key);
}

/** Store a settle action's final state (an upsert of its document). */
export async function finalizeSettlement(
  journal: Pick<EventStore, "commit">,
  action: OperatorAction,
  final: SettlementState,
  now: number,
): Promise<void> {
  await journal.commit({
    documents: [{ collection: OPERATOR_ACTIONS, id: action.id, doc: { ...action, final } }],
    now,
  });
}
