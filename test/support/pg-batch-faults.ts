import pg from "pg";
import { PG_URL } from "./services.js";
import { waitFor } from "./wait.js";

/**
 * Faults inside a PostgreSQL group-commit batch, for tests: hold an inbox key (or finish an outbox
 * row) so that a batch recording it waits in its transaction, then terminate the connection of the
 * waiting batch, or end the holding transaction while the batch waits.
 */

/** Hold an inbox key in an open transaction: a commit recording the same key waits for it. Returns the release. */
export async function holdInboxKey(qschema: string, consumer: string, messageId: string): Promise<() => Promise<void>> {
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  await client.query("BEGIN");
  await client.query(
    `INSERT INTO ${qschema}.inbox (consumer, message_id, reply, recorded_at) VALUES ($1, $2, 'null', 0)`,
    [consumer, messageId],
  );
  let released = false;
  return async () => {
    if (released) return;
    released = true;
    await client.query("ROLLBACK");
    await client.end();
  };
}

/**
 * Finish an outbox row in an open transaction, as another process's outcome commit would: a batch
 * that then updates the row waits for it. Returns the commit and the rollback of that transaction.
 */
export async function finishOutboxRow(
  qschema: string,
  id: string,
): Promise<{ commit: () => Promise<void>; rollback: () => Promise<void> }> {
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  await client.query("BEGIN");
  await client.query(`UPDATE ${qschema}.outbox SET status = 'done', outcome = 'completed' WHERE id = $1`, [id]);
  let ended = false;
  const end = (how: string) => async () => {
    if (ended) return;
    ended = true;
    await client.query(how);
    await client.end();
  };
  return { commit: end("COMMIT"), rollback: end("ROLLBACK") };
}

/** Wait until the group-commit call of `applicationName` waits on a lock; `terminate` then ends its backend. */
export async function waitForWaitingBatch(applicationName: string, what: string, terminate = false): Promise<void> {
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  try {
    await waitFor(
      async () => {
        const r = await admin.query(
          `SELECT ${terminate ? "pg_terminate_backend(pid)" : "pid"} FROM pg_stat_activity
           WHERE application_name = $1 AND wait_event_type = 'Lock' AND query LIKE '%oncely_commit%'`,
          [applicationName],
        );
        return (r.rowCount ?? 0) > 0;
      },
      what,
      10_000,
    );
  } finally {
    await admin.end();
  }
}

/** Terminate the backend of `applicationName` whose group-commit call waits on a lock, once there is one. */
export const terminateWaitingBatch = (applicationName: string, what: string): Promise<void> =>
  waitForWaitingBatch(applicationName, what, true);
