import type pg from "pg";
import { bookkeepingSql, upgradeDevelopmentSchema } from "./development-schema.js";
import { fileSql, loadMigrations, type Migration } from "./schema-files.js";
import { withClient } from "./sql.js";
import type { Tables } from "./tables.js";

/**
 * The versioned schema, read from its frozen SQL files (schema-files.ts, schema/README.md): the
 * baseline, then one folder per later change, each applied once and never edited or regenerated.
 */
export const migrations: readonly Migration[] = loadMigrations();

/**
 * Each migration runs once, in its own transaction that first takes a transaction-scoped advisory
 * lock per schema: several processes calling `migrate()` at once queue on the lock, and each one
 * that follows sees the version already recorded. A schema made before the baseline is upgraded or
 * refused first (development-schema.ts).
 */
export async function migrate(pool: pg.Pool, t: Tables): Promise<void> {
  const [baseline] = migrations;
  if (!baseline) throw new Error("oncely's PostgreSQL schema files hold no migration");
  await withClient(pool, async (client, markBroken) => {
    for (const migration of migrations) {
      await client.query("BEGIN");
      try {
        await client.query("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", [`oncely.migrate:${t.schema}`]);
        // Checked before CREATE SCHEMA: a role without CREATE on the database can still use an existing schema.
        const schema = await client.query("SELECT 1 FROM pg_namespace WHERE nspname = $1", [t.schema]);
        if (!schema.rowCount) await client.query(`CREATE SCHEMA ${t.qschema}`);
        await upgradeDevelopmentSchema(client, t, baseline);
        // The bookkeeping table is the one object made with IF NOT EXISTS: it must exist to be asked.
        await client.query(bookkeepingSql(t));
        const applied = await client.query(`SELECT 1 FROM ${t.migrations} WHERE version = $1`, [migration.version]);
        if (!applied.rowCount) {
          for (const file of migration.files) await client.query(fileSql(migration, file, t));
          // applied_at is audit only; it never takes part in a decision, so the wall clock is fine here.
          await client.query(`INSERT INTO ${t.migrations} (version, name, applied_at) VALUES ($1, $2, $3)`, [
            migration.version,
            migration.name,
            Date.now(),
          ]);
        }
        await client.query("COMMIT");
      } catch (error) {
        await client.query("ROLLBACK").catch(markBroken);
        throw error;
      }
    }
  });
}
