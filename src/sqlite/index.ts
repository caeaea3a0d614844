import { SqliteJournal, type SqliteJournalOptions } from "./journal.js";

// One way to build it: `sqliteJournal(...)`; the class is exported as a type.
export type { SqliteJournal, SqliteJournalOptions } from "./journal.js";

/**
 * Open (or create) a SQLite journal file. Call `migrate()` before use.
 *
 * @example
 * const journal = sqliteJournal({ path: "./data/oncely.db" });
 * await journal.migrate();
 */
export function sqliteJournal(options: SqliteJournalOptions): SqliteJournal {
  return new SqliteJournal(options);
}

export { type SqliteOperationStoreOptions, sqliteOperationStore } from "./operations.js";
