import type { NewOutboxRow, OutboxRow } from "../journal/types.js";

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
}
