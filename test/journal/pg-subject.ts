import pg from "pg";
import { afterAll, describe, it } from "vitest";
import type { ConformanceSubject } from "../../src/journal/conformance.js";
import type { Journal } from "../../src/journal/types.js";
import { postgresJournal } from "../../src/postgres/index.js";
import { tables } from "../../src/postgres/tables.js";
import { freshPgSchema, PG_URL, probePostgres } from "../support/services.js";

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
          `TRUNCATE ${[t.events, t.snapshots, t.outbox, t.inbox, t.checkpoints, t.parked, t.deadLetters, t.documents, t.published].join(", ")} RESTART IDENTITY`,
        );
      },
    };
  };
  return { factory, end: () => admin.end() };
}

/**
 * The PostgreSQL part of a test file: `body` gets a factory of journals on a fresh schema of this
 * file (dropped after it). When PostgreSQL is unreachable the part is skipped with the reason in
 * its title; under CI=true `probePostgres` throws instead, which fails the file.
 */
export async function onPostgres(
  label: string,
  title: string,
  body: (factory: () => Promise<ConformanceSubject>) => void,
): Promise<void> {
  const service = await probePostgres();
  if (!service.available) {
    describe.skip(`${title} (postgres skipped: ${service.reason})`, () => {
      it("needs PostgreSQL", () => {});
    });
    return;
  }
  const { schema, drop } = await freshPgSchema(label);
  const subjects = pgSubjects(schema);
  afterAll(async () => {
    await subjects.end();
    await drop();
  });
  body(subjects.factory);
}
