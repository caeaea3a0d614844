import pg from "pg";
import { type PostgresJournal, postgresJournal } from "../../src/postgres/index.js";
import { PG_URL } from "./services.js";

/** A pool whose statements are kept, to count the calls of a function or the statements of a kind. */
export function countingPool(applicationName: string, max = 4) {
  const pool = new pg.Pool({ connectionString: PG_URL, max, application_name: applicationName });
  const texts: string[] = [];
  const query = pool.query.bind(pool) as (...args: unknown[]) => unknown;
  (pool as unknown as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]) => {
    const config = args[0] as string | { text: string };
    texts.push(typeof config === "string" ? config : config.text);
    return query(...args);
  };
  return {
    pool,
    /** Calls of the schema function `fn` (as `.fn(`). */
    calls: (fn: string) => texts.filter((t) => t.includes(`.${fn}(`)).length,
    /** Statements whose text matches. */
    matching: (pattern: RegExp) => texts.filter((t) => pattern.test(t)).length,
    reset: () => {
      texts.length = 0;
    },
  };
}

/** A journal on `schema` over a counting pool, for `use`; both closed after it. */
export async function withCountingJournal(
  schema: string,
  applicationName: string,
  use: (journal: PostgresJournal, counts: ReturnType<typeof countingPool>) => Promise<void>,
): Promise<void> {
  const counts = countingPool(applicationName);
  const journal = postgresJournal({ connectionString: PG_URL, schema, pool: counts.pool });
  try {
    await use(journal, counts);
  } finally {
    await journal.close();
    await counts.pool.end();
  }
}
