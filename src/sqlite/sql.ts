import type Database from "better-sqlite3";

/** A connection plus its prepared statements, prepared on first use (tables exist only after migrate). */
export class Sql {
  private readonly cache = new Map<string, Database.Statement>();
  constructor(readonly db: Database.Database) {}

  stmt(text: string): Database.Statement {
    let statement = this.cache.get(text);
    if (!statement) {
      statement = this.db.prepare(text);
      this.cache.set(text, statement);
    }
    return statement;
  }
}

/** SQLite's LIMIT: a negative value means "no limit". */
export const sqliteLimit = (limit: number | undefined): number =>
  limit === undefined || !Number.isFinite(limit) ? -1 : Math.max(0, Math.floor(limit));
