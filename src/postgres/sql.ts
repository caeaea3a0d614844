import type pg from "pg";

/** A pool or a checked-out client: both run one statement. */
export type Queryable = Pick<pg.Pool, "query"> | pg.PoolClient;

/**
 * Check a client out of the pool for `work` and give it back, destroyed if its connection broke.
 * While checked out, a client's connection can die between two statements (a terminated backend,
 * a server restart); pg then emits 'error' on the client, and with nobody listening that is an
 * uncaught exception that ends the process. The listener records it instead; the next statement
 * fails and the caller sees that failure.
 */
export async function withClient<T>(
  pool: pg.Pool,
  work: (client: pg.PoolClient, markBroken: (error: Error) => void) => Promise<T>,
): Promise<T> {
  const client = await pool.connect();
  let broken: Error | undefined;
  const onError = (error: Error) => {
    broken = error;
  };
  client.on("error", onError);
  try {
    return await work(client, (error) => {
      broken = error;
    });
  } finally {
    // A broken connection is destroyed instead of going back to the pool. It keeps our listener:
    // the server's FATAL message can still arrive after the failed statement rejected.
    if (!broken) client.off("error", onError);
    client.release(broken);
  }
}

/**
 * Make a pool safe to lose connections: errors of idle clients (the pool's 'error') and of clients
 * that die while being handed out (each client's own 'error') go to `onError` instead of becoming
 * uncaught exceptions. A backend terminated while pg-pool hands a client out (after pg-pool
 * removed its idle listener, before the caller adds one) otherwise ends the process; the chaos run
 * found that. The failure still reaches whoever runs a statement on that client.
 */
export function guardPool(pool: pg.Pool, onError: (error: Error) => void): pg.Pool {
  pool.on("error", onError);
  pool.on("connect", (client) => {
    client.on("error", onError);
  });
  return pool;
}
