import type { NewOutboxRow, NewPublished, OutboxRow } from "../journal/types.js";

/**
 * Effects handed over at commit. A dispatcher in this process offers to run outbox rows itself:
 * the runtime asks it for a lease while it builds a commit, the row is inserted already leased
 * (owner = a fresh fencing token, `lease_until`), and after the commit returns the row is given to
 * the dispatcher in memory. No poll, NOTIFY or claim sits between a commit and its handler.
 *
 * Failure window: if the process dies between the commit and the handler (or the dispatcher
 * stops first), the row stays leased until `lease_until`; then any dispatcher claims it, with the
 * same key, exactly as it takes over a row whose claimer died.
 */
export interface HandOver {
  /** A lease for a row this dispatcher will run itself, or undefined to leave it to a claim. */
  lease(row: NewOutboxRow, now: number): { owner: string; until: number } | undefined;
  /** Rows this process committed leased to this dispatcher: run them now. */
  take(rows: OutboxRow[]): void;
  /**
   * Publish an event row in the commit itself, when this hand-over's log is the committing
   * journal's published log (the journal transport's relay, see `Relay.handOverTo`): the entry
   * the commit appends instead of inserting the row, what to run once the commit returned (the
   * hand-over to this process's consumers), and what to run when it failed (its fate may be
   * unknown: the entry may be in the log after all). Undefined leaves the row to `lease` and the
   * outbox.
   *
   * Failure window: the process dies after the commit, before `committed`: the entry is in the
   * log, and every reader of the log (this process's consumers too, after a restart) reads it.
   */
  publish?(row: NewOutboxRow): { entry: NewPublished; committed(): void; failed(): void } | undefined;
}
