import type { Tables } from "./tables.js";

/**
 * The packed wire format of a commit (migration 11): the commit is still an object, but its
 * events, outbox rows and done rows are positional arrays, fields in the orders below, and the
 * four arrays a commit rarely fills (park, unpark, dead, docs) are left out when empty.
 *
 * Why: the server parses each batch to jsonb, and building jsonb objects (each one's keys sorted
 * and deduplicated), not reading the text, is most of that parse (validating the same text as json
 * takes a fifth of the time). Measured on one captured 16 kB batch of the order workflow, cast to
 * jsonb 500 times, three rounds: 0.23–0.24 ms as objects, 0.13–0.15 ms packed; and the server's
 * time per batch is on every order's path: a third of a millisecond more per batch cost the
 * workflow about an eighth of its throughput (docs/benchmarks.md, the eighth sitting of 2026-12-03).
 *
 * Every field is always written (a null as null), so a position never stands for an absent key,
 * and `->N`/`->>N` read exactly what `->'name'`/`->>'name'` read in the object format.
 */
export const EVENT_FIELDS = ["event_id", "type", "data", "causation_id", "correlation_id", "schema_version"] as const;
export const OUTBOX_FIELDS = [
  "id",
  "category",
  "kind",
  "stream",
  "payload",
  "not_before",
  "lease_owner",
  "lease_until",
  "attempts",
  "result",
] as const;
export const DONE_FIELDS = ["id", "outcome", "result"] as const;
/** Arrays left out of a packed commit when empty. */
export const RARE_ARRAYS = ["park", "unpark", "dead", "docs"] as const;

type Fields = readonly string[];

/** How the SQL reads a row's field: `'name'` in the object format, its position in the packed one. */
export interface RowFields {
  event(field: (typeof EVENT_FIELDS)[number]): string;
  outbox(field: (typeof OUTBOX_FIELDS)[number]): string;
  done(field: (typeof DONE_FIELDS)[number]): string;
  /** `jsonb_array_length` of one of the rare arrays, 0 when a packed commit leaves it out. */
  rareLength(commit: string, name: (typeof RARE_ARRAYS)[number]): string;
}

const position = (fields: Fields, field: string): string => {
  const at = fields.indexOf(field);
  if (at < 0) throw new Error(`no packed field "${field}"`);
  return String(at);
};

export const objectRowFields: RowFields = {
  event: (f) => `'${f}'`,
  outbox: (f) => `'${f}'`,
  done: (f) => `'${f}'`,
  rareLength: (c, name) => `jsonb_array_length(${c}->'${name}')`,
};

export const packedRowFields: RowFields = {
  event: (f) => position(EVENT_FIELDS, f),
  outbox: (f) => position(OUTBOX_FIELDS, f),
  done: (f) => position(DONE_FIELDS, f),
  rareLength: (c, name) => `coalesce(jsonb_array_length(${c}->'${name}'), 0)`,
};

const rowsAsObjects = (c: string, key: string, fields: Fields): string =>
  `'${key}', (SELECT coalesce(jsonb_agg(jsonb_build_object(${fields
    .map((f, i) => `'${f}', r.v->${i}`)
    .join(", ")}) ORDER BY r.n), '[]'::jsonb) FROM jsonb_array_elements(${c}->'${key}') WITH ORDINALITY AS r(v, n))`;

/**
 * `oncely_unpack(commit jsonb) RETURNS jsonb`: a packed commit in the object format, for the
 * per-commit path (`oncely_commit`), which the set path leaves a commit to when it shares a key or
 * the set path fails. A lease-held outbox update (`{"update": ...}`) is not packed and passes as is.
 */
export const unpackFunctionSql = (t: Tables): string => `
CREATE OR REPLACE FUNCTION ${t.unpackFunction}(c jsonb) RETURNS jsonb
LANGUAGE sql IMMUTABLE AS $oncely$
  SELECT CASE WHEN c ? 'update' THEN c ELSE c || jsonb_build_object(
    ${rowsAsObjects("c", "events", EVENT_FIELDS)},
    ${rowsAsObjects("c", "outbox", OUTBOX_FIELDS)},
    ${rowsAsObjects("c", "done", DONE_FIELDS)},
    ${RARE_ARRAYS.map((name) => `'${name}', coalesce(c->'${name}', '[]'::jsonb)`).join(", ")}) END
$oncely$;
`;
