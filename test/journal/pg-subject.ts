import pg from "pg";
import type { ConformanceSubject } from "../../src/journal/conformance.js";
import type { Journal } from "../../src/journal/types.js";
import { postgresJournal } from "../../src/postgres/index.js";
import { tables } from "../../src/postgres/tables.js";
import { PG_URL } from "../support/services.js";

/**
 * Conformance subjects on one schema (one per test file): each test gets journals on the schema
 * and, after it, every table emptied, so tests cannot see each other's rows.
 */
export function pgSubjects(schema: string): { factory: () => Promise<ConformanceSubject>; end: () => Promise<void> } {
  const admin = new pg.Pool({ connectionString: PG_URL, max: 1 });
  admin.on("error", () => {});
  const t = tables(schema);
  const factory = async (): Promise<ConformanceSubject> => {
    const opened: Journal[] = [];
    const open = async () => {
      const journal = postgresJournal({ connectionString: PG_URL, schema, max: 4 });
      opened.push(journal);
      await journal.migrate();
      return journal;
    };
    const journal = await open();
    return {
      journal,
      reopen: open,
      secondWriter: open,
      cleanup: async () => {
        for (const j of opened) await j.close();
        await admin.query(
          `TRUNCATE ${[t.events, t.snapshots, t.outbox, t.inbox, t.checkpoints, t.parked, t.deadLetters, t.documents].join(", ")} RESTART IDENTITY`,
        );
      },
    };
  };
  return { factory, end: () => admin.end() };
}
