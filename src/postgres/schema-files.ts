import { readdirSync, readFileSync, statSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { Tables } from "./tables.js";

/**
 * The PostgreSQL schema as frozen SQL files (see schema/README.md): `schema/NNNN_name/` is
 * migration NNNN, its `.sql` files run in name order, and each file is applied exactly as written
 * except for four placeholders, replaced at load for the journal's schema:
 *
 * - `${schema}`: the schema as a quoted identifier, e.g. `"public"` (every object is schema-qualified,
 *   so no statement depends on a connection's search_path);
 * - `${published_lock}`: the published log's advisory lock key, a string literal;
 * - `${published_channel}`: the published log's NOTIFY channel name, a string literal;
 * - `${slice_count}`: the journal's slice count, an integer (the outbox slices' backfill uses it).
 *
 * The files sit next to this module: in src/ for the tests, in dist/ for the package (the build
 * copies them there, since tsc does not).
 */
export const SCHEMA_DIR: URL = new URL("./schema/", import.meta.url);

export interface SchemaFile {
  /** The file's name in its migration's folder. */
  name: string;
  /** Its text as written, placeholders included. */
  text: string;
}

export interface Migration {
  version: number;
  /** The folder's name, `NNNN_name`, recorded with the version. */
  name: string;
  files: SchemaFile[];
}

const MIGRATION_DIR = /^(\d{4})_[a-z0-9_]+$/;
const PLACEHOLDER = /\$\{([^}]*)\}/g;

const literal = (text: string): string => `'${text.replace(/'/g, "''")}'`;

/** Each placeholder's value for one schema. */
export function placeholders(t: Tables): Record<string, string> {
  return {
    schema: t.qschema,
    published_lock: literal(`oncely.published:${t.schema}`),
    published_channel: literal(t.publishedChannel),
    slice_count: String(t.sliceCount),
  };
}

/**
 * Every migration in `dir`, in version order. Versions run 1, 2, 3... without a gap: a folder
 * misnamed, a version twice or missing, or a folder without SQL throws, naming it, instead of being
 * skipped (a skipped migration would leave every schema short of it without a word).
 */
export function loadMigrations(dir: URL = SCHEMA_DIR): Migration[] {
  const path = fileURLToPath(dir);
  let entries: string[];
  try {
    entries = readdirSync(path);
  } catch (error) {
    throw new Error(`oncely's PostgreSQL schema files are missing from ${path}: the package build copies them there`, {
      cause: error,
    });
  }
  const migrations: Migration[] = [];
  for (const entry of entries.sort()) {
    if (entry === "README.md") continue;
    const match = MIGRATION_DIR.exec(entry);
    if (!match || !statSync(new URL(entry, dir)).isDirectory()) {
      throw new Error(`${path}: "${entry}" is not a migration folder (NNNN_name, lower case)`);
    }
    const version = Number(match[1]);
    if (version !== migrations.length + 1) {
      throw new Error(
        `${path}: "${entry}" is version ${version}, expected ${migrations.length + 1} (no gap, no repeat)`,
      );
    }
    const names = readdirSync(new URL(`${entry}/`, dir)).sort();
    const other = names.filter((name) => !name.endsWith(".sql"));
    if (other.length > 0 || names.length === 0) {
      throw new Error(
        `${path}${entry}: a migration folder holds .sql files only, at least one (found: ${names.join(", ")})`,
      );
    }
    const files = names.map((name) => ({ name, text: readFileSync(new URL(`${entry}/${name}`, dir), "utf8") }));
    migrations.push({ version, name: entry, files });
  }
  return migrations;
}

/** A file's SQL for one schema; a placeholder not listed in `placeholders` throws, naming the file. */
export function fileSql(migration: Migration, file: SchemaFile, t: Tables): string {
  const values = placeholders(t);
  return file.text.replace(PLACEHOLDER, (whole: string, name: string) => {
    const value = values[name];
    if (value === undefined) {
      throw new Error(
        `${migration.name}/${file.name}: unknown placeholder ${whole} (known: ${Object.keys(values).join(", ")})`,
      );
    }
    return value;
  });
}

/**
 * The newest definition of one server function: the file `<name>.sql` of the latest migration that
 * has one, and that migration (for `fileSql`). The bench re-creates a function from it.
 */
export function functionFile(
  migrations: readonly Migration[],
  name: string,
): { migration: Migration; file: SchemaFile } {
  for (const migration of [...migrations].reverse()) {
    const file = migration.files.find((f) => f.name === `${name}.sql`);
    if (file) return { migration, file };
  }
  throw new Error(`no migration has ${name}.sql`);
}
