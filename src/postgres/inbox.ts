import { inboxRecord } from "../journal/sql-rows.js";
import type { InboxRecord } from "../journal/types.js";
import { INBOX_COLUMNS } from "./columns.js";
import type { Queryable } from "./sql.js";
import type { Tables } from "./tables.js";

export async function getInbox(
  q: Queryable,
  t: Tables,
  consumer: string,
  messageId: string,
): Promise<InboxRecord | undefined> {
  const result = await q.query(`SELECT ${INBOX_COLUMNS} FROM ${t.inbox} WHERE consumer = $1 AND message_id = $2`, [
    consumer,
    messageId,
  ]);
  return result.rows[0] ? inboxRecord(result.rows[0]) : undefined;
}

/** Strictly before `before`: a record made at exactly that time is kept. */
export async function pruneInbox(q: Queryable, t: Tables, before: number): Promise<number> {
  const result = await q.query(`DELETE FROM ${t.inbox} WHERE recorded_at < $1`, [before]);
  return result.rowCount ?? 0;
}
