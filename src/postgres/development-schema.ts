import type pg from "pg";
import { TerminalError } from "../base/errors.js";
import { fileSql, type Migration } from "./schema-files.js";
import { quoteIdent, type Tables } from "./tables.js";

/**
 * Schemas made before the baseline. Until the schema was frozen into files, oncely's migrations were
 * numbered 1 to 14 and generated their SQL, and recorded them in a bookkeeping table without a `name`
 * column; that is how such a schema is told apart. One that has all fourteen has exactly the baseline's
 * tables and indexes (migrations 1, 4, 7 and 13 made them), and functions of the same names and
 * behaviour, plus seven that nothing calls any more. It is upgraded in place, data kept: every oncely
 * function is dropped, the baseline's are created from its files, and the bookkeeping table is made
 * anew with the baseline recorded. Any other set of versions is refused with what to do: no released
 * version of oncely made one, so it is a development database that can be dropped.
 */
export const DEVELOPMENT_VERSIONS = 14;

/** The functions those schemas may hold: the baseline's and the ones it no longer has. */
const DEVELOPMENT_FUNCTIONS = [
  "oncely_commit",
  "oncely_commit_set",
  "oncely_commit_batch",
  "oncely_commit_json",
  "oncely_commit_keyed",
  "oncely_commit_set_keyed",
  "oncely_commit_packed",
  "oncely_commit_set_packed",
  "oncely_unpack",
  "oncely_publish",
  "oncely_publish_batch",
];

/** The baseline's file that creates the tables; its other files create the functions. */
const BASELINE_TABLES = "00_tables.sql";

/** The bookkeeping table as the baseline makes it. */
export const bookkeepingSql = (t: Tables): string =>
  `CREATE TABLE IF NOT EXISTS ${t.migrations} (version integer PRIMARY KEY, name text NOT NULL, applied_at bigint NOT NULL)`;

/**
 * Called in the migration's transaction, under its lock, before the bookkeeping table is made:
 * upgrades a development schema (see above) or refuses it; does nothing to any other schema.
 */
export async function upgradeDevelopmentSchema(client: pg.PoolClient, t: Tables, baseline: Migration): Promise<void> {
  const columns = await client.query(
    `SELECT column_name FROM information_schema.columns
     WHERE table_schema = $1 AND table_name = 'oncely_schema_migrations'`,
    [t.schema],
  );
  const names = columns.rows.map((row) => row.column_name as string);
  if (names.length === 0 || names.includes("name")) return;
  const versions = (await client.query(`SELECT version FROM ${t.migrations} ORDER BY version`)).rows.map(
    (row) => row.version as number,
  );
  if (versions.length === 0) {
    // Nothing was migrated under the old numbering: only its bookkeeping table is there.
    await client.query(`DROP TABLE ${t.migrations}`);
    return;
  }
  const complete =
    versions.length === DEVELOPMENT_VERSIONS && versions.every((version, index) => version === index + 1);
  if (!complete) {
    throw new TerminalError(
      `PostgreSQL schema "${t.schema}" was migrated by a development version of oncely (versions ` +
        `${versions.join(", ")} of 1-${DEVELOPMENT_VERSIONS} recorded in ${t.migrations}), which this ` +
        `version upgrades only when all ${DEVELOPMENT_VERSIONS} are there. Drop the schema (DROP SCHEMA ` +
        `${t.qschema} CASCADE) and call migrate() again, or use another schema.`,
    );
  }
  const functions = await client.query(
    `SELECT p.proname, pg_get_function_identity_arguments(p.oid) AS args
     FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
     WHERE n.nspname = $1 AND p.proname = ANY ($2)`,
    [t.schema, DEVELOPMENT_FUNCTIONS],
  );
  for (const row of functions.rows) {
    await client.query(`DROP FUNCTION ${t.qschema}.${quoteIdent(row.proname as string)}(${row.args as string})`);
  }
  for (const file of baseline.files) {
    if (file.name !== BASELINE_TABLES) await client.query(fileSql(baseline, file, t));
  }
  await client.query(`DROP TABLE ${t.migrations}`);
  await client.query(bookkeepingSql(t));
  // applied_at is audit only, as in migrate().
  await client.query(`INSERT INTO ${t.migrations} (version, name, applied_at) VALUES ($1, $2, $3)`, [
    baseline.version,
    baseline.name,
    Date.now(),
  ]);
}
