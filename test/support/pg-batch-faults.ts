import pg from "pg";
import { PG_URL } from "./services.js";
import { waitFor } from "./wait.js";

/**
 * Faults inside a PostgreSQL group-commit batch, for tests: hold an inbox key so that a batch
 * recording it waits in its transaction, then terminate the connection of the waiting batch.
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

/** Terminate the backend of `applicationName` whose group-commit call waits on a lock, once there is one. */
export async function terminateWaitingBatch(applicationName: string, what: string): Promise<void> {
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  try {
    await waitFor(
      async () => {
        const r = await admin.query(
          `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
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
