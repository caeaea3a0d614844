import type pg from "pg";

/**
 * What a schema holds, read from the catalogs, with the schema's own name taken out so two schemas
 * compare: tables and their columns, constraints, indexes, and functions with their settings and
 * bodies. A body is compared without its comments and with runs of white space made one space, so
 * a function re-indented or re-commented in its file is the same function.
 */
export interface SchemaShape {
  columns: string[];
  constraints: string[];
  indexes: string[];
  functions: { name: string; signature: string; config: string; body: string }[];
}

/** Every mention of the schema's name (unique to it: a test's fresh schema), as `S`. */
const ofSchema = (schema: string, text: string): string => text.replaceAll(schema, "S");

export const normalizedBody = (body: string): string =>
  body
    .replace(/--[^\n]*/g, "")
    .replace(/\s+/g, " ")
    .trim();

export async function schemaShape(client: pg.Client, schema: string): Promise<SchemaShape> {
  const columns = await client.query(
    `SELECT table_name || '.' || column_name || ' ' || data_type || ' ' || coalesce(collation_name, '-') || ' ' ||
       is_nullable || ' ' || is_identity || ' ' || coalesce(column_default, '-') AS d
     FROM information_schema.columns WHERE table_schema = $1 AND table_name <> 'oncely_schema_migrations'
     ORDER BY table_name, ordinal_position`,
    [schema],
  );
  const constraints = await client.query(
    `SELECT c.conrelid::regclass::text || ' ' || c.conname || ' ' || pg_get_constraintdef(c.oid) AS d
     FROM pg_constraint c JOIN pg_namespace n ON n.oid = c.connamespace
     WHERE n.nspname = $1 AND c.conrelid::regclass::text NOT LIKE '%oncely_schema_migrations%' ORDER BY 1`,
    [schema],
  );
  const indexes = await client.query(
    `SELECT indexdef AS d FROM pg_indexes WHERE schemaname = $1 AND tablename <> 'oncely_schema_migrations'
     ORDER BY indexname`,
    [schema],
  );
  const functions = await client.query(
    `SELECT p.proname AS name, pg_get_function_identity_arguments(p.oid) || ' -> ' ||
       pg_get_function_result(p.oid) || ' ' || l.lanname || ' ' || p.provolatile::text AS signature,
       coalesce(array_to_string(p.proconfig, ' '), '') AS config, p.prosrc AS body
     FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace JOIN pg_language l ON l.oid = p.prolang
     WHERE n.nspname = $1 ORDER BY 1, 2`,
    [schema],
  );
  return {
    columns: columns.rows.map((r) => ofSchema(schema, r.d as string)),
    constraints: constraints.rows.map((r) => ofSchema(schema, r.d as string)),
    indexes: indexes.rows.map((r) => ofSchema(schema, r.d as string)),
    functions: functions.rows.map((r) => ({
      name: r.name as string,
      signature: r.signature as string,
      config: r.config as string,
      body: normalizedBody(ofSchema(schema, r.body as string)),
    })),
  };
}
