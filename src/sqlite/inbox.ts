import { inboxRecord } from "../journal/sql-rows.js";
import type { InboxRecord } from "../journal/types.js";
import type { Sql } from "./sql.js";

export function getInbox(sql: Sql, consumer: string, messageId: string): InboxRecord | undefined {
  const row = sql.stmt("SELECT * FROM inbox WHERE consumer = ? AND message_id = ?").get(consumer, messageId);
  return row ? inboxRecord(row) : undefined;
}

/** Strictly before `before`: a record made at exactly that time is kept. */
export function pruneInbox(sql: Sql, before: number): number {
  return sql.stmt("DELETE FROM inbox WHERE recorded_at < ?").run(before).changes;
}
