import type { StateAnswers, StateReads } from "../journal/types.js";
import { getDocument } from "./documents.js";
import { getInbox } from "./inbox.js";
import { getCheckpoint, getParked } from "./sequencing.js";
import type { Sql } from "./sql.js";

/**
 * `Journal.readState` on SQLite: the point reads in one read transaction, so every answer comes
 * from one snapshot of the file even while another process writes to it (in WAL mode, statements
 * outside a transaction each see the latest commit). Each read is an index probe of its table.
 */
export function stateReader(sql: Sql): (reads: StateReads) => StateAnswers {
  return sql.db.transaction(
    (reads: StateReads): StateAnswers => ({
      checkpoints: (reads.checkpoints ?? []).map((r) => getCheckpoint(sql, r.consumer, r.source)),
      inbox: (reads.inbox ?? []).map((r) => getInbox(sql, r.consumer, r.messageId)),
      parked: (reads.parked ?? []).map((r) => getParked(sql, r.consumer, r.source, r.version)),
      documents: (reads.documents ?? []).map((r) => getDocument(sql, r.collection, r.id)),
    }),
  );
}
