import { PostgresJournal, type PostgresJournalOptions } from "./journal.js";

// One way to build it: `postgresJournal(...)`; the class is exported as a type.
export type { PostgresJournal, PostgresJournalOptions } from "./journal.js";

/**
 * A journal in a PostgreSQL schema. Call `migrate()` before use; it is safe from several processes.
 *
 * @example
 * const journal = postgresJournal({ connectionString: "postgres://app@db/shop", schema: "oncely" });
 * await journal.migrate();
 */
export function postgresJournal(options: PostgresJournalOptions): PostgresJournal {
  return new PostgresJournal(options);
}

export { type PostgresOperationStoreOptions, postgresOperationStore } from "./operations.js";
