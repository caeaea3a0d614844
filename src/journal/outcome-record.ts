import type { InboxReader, OutboxReader, OutboxRow } from "./types.js";

/**
 * Where a final outcome's dedup record lives (see `InboxEntry.outcomeOf`): in the row it finishes,
 * while the owner holds that row. "Held" means the row's stream is the consumer and it is an
 * effect or a message (an event row is the relay's, and its done status says it was published).
 * Every back end applies this one rule; PostgreSQL states it in SQL (commit-function.ts).
 */
export const holdsOutcomeRow = (row: Pick<OutboxRow, "stream" | "category"> | undefined, consumer: string): boolean =>
  row !== undefined && row.stream === consumer && row.category !== "event";

/**
 * The record `owner` keeps of a final outcome for outbox row `id` under `messageId`: its inbox row
 * (with the reply it stored), or the row itself done while the owner holds it (no reply). For
 * readers outside the commit (a duplicate's answer, the simulator's invariants).
 */
export async function outcomeRecord(
  journal: InboxReader & Pick<OutboxReader, "getOutbox">,
  owner: string,
  id: string,
  messageId: string,
): Promise<{ reply: unknown; byRow: boolean } | undefined> {
  const inbox = await journal.getInbox(owner, messageId);
  if (inbox) return { reply: inbox.reply, byRow: false };
  const row = await journal.getOutbox(id);
  return holdsOutcomeRow(row, owner) && row?.status === "done" ? { reply: null, byRow: true } : undefined;
}

/** Whether `owner` recorded a final outcome for outbox row `id` under `messageId`, either way. */
export const outcomeRecorded = async (
  journal: InboxReader & Pick<OutboxReader, "getOutbox">,
  owner: string,
  id: string,
  messageId: string,
): Promise<boolean> => (await outcomeRecord(journal, owner, id, messageId)) !== undefined;
