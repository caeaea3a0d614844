import type { Journal, OutboxRow } from "./types.js";

/**
 * Where a final outcome's dedup record lives (see `InboxEntry.outcomeOf`): in the row it finishes,
 * while the owner holds that row. "Held" means the row's stream is the consumer and it is an
 * effect or a message (an event row is the relay's, and its done status says it was published).
 * Every back end applies this one rule; PostgreSQL states it in SQL (commit-function.ts).
 */
export const holdsOutcomeRow = (row: Pick<OutboxRow, "stream" | "category"> | undefined, consumer: string): boolean =>
  row !== undefined && row.stream === consumer && row.category !== "event";

/**
 * Whether `owner` recorded a final outcome for outbox row `id` under `messageId`: its inbox row,
 * or the row itself done while the owner holds it. For readers outside the commit (a duplicate's
 * answer, the simulator's invariants): the record is one or the other, never both required.
 */
export async function outcomeRecorded(
  journal: Pick<Journal, "getInbox" | "getOutbox">,
  owner: string,
  id: string,
  messageId: string,
): Promise<boolean> {
  if (await journal.getInbox(owner, messageId)) return true;
  const row = await journal.getOutbox(id);
  return holdsOutcomeRow(row, owner) && row?.status === "done";
}
