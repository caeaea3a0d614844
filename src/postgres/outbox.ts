import { takesNoEffects } from "../journal/rows.js";
import { outboxRow } from "../journal/sql-rows.js";
import type { ClaimOptions, OutboxFilter, OutboxRow } from "../journal/types.js";
import { OUTBOX_COLUMNS } from "./columns.js";
import type { Queryable } from "./sql.js";
import { sqlLimit } from "./streams.js";
import type { Tables } from "./tables.js";

/**
 * Claim in one statement: the materialized CTE locks due rows with FOR UPDATE SKIP LOCKED (rows another
 * claimer is taking right now are skipped, not waited for), the UPDATE sets our lease. A row whose
 * lease another claimer set after our snapshot is re-checked against the committed row when we lock
 * it, so it is never handed out twice. `inStreamOrder` holds a row back while an earlier row of its
 * stream and category is unfinished (leased or not). A finished row (done, dead) is never claimed;
 * saying so literally lets the planner use the claim index, which holds only unfinished rows.
 * MATERIALIZED: the locking SELECT runs exactly once, so a claim can never take more than
 * `limit` rows (an `IN (subselect)` may be re-evaluated by some plans).
 * A claim for some slices says so (`slice = ANY($8)`), and reads the slice index (migration 0002);
 * a claim for every slice runs the statement without it, as before slices.
 * Every claim rescans the due rows instead of reading past a position, so a row whose transaction
 * commits after rows with a higher seq is never skipped, only claimed a little later.
 */
/** The outbox columns qualified by the UPDATE's alias (`due` also has an `id`). */
const CLAIMED_COLUMNS = OUTBOX_COLUMNS.split(", ")
  .map((column) => `o.${column}`)
  .join(", ");

/** The claim statement and its parameters (exported for the plan test). */
export function claimStatement(t: Tables, o: ClaimOptions): { text: string; values: unknown[] } {
  return {
    text: `WITH due AS MATERIALIZED (
       SELECT c.id FROM ${t.outbox} c
       WHERE c.status = ANY($4::text[]) AND c.status NOT IN ('done', 'dead')
         AND ($5::text[] IS NULL OR c.category = ANY($5::text[]))
         AND c.not_before <= $3
         AND (c.lease_until IS NULL OR c.lease_until <= $3)${o.slices === undefined ? "" : "\n         AND c.slice = ANY($8::integer[])"}
         AND (NOT $6::boolean OR NOT EXISTS (
           SELECT 1 FROM ${t.outbox} e
           WHERE e.stream = c.stream AND e.category = c.category AND e.seq < c.seq
             AND e.status NOT IN ('done', 'dead')${takesNoEffects(o) ? " AND e.category <> 'effect'" : ""}))
       ORDER BY c.seq
       LIMIT $7
       FOR UPDATE SKIP LOCKED)
     UPDATE ${t.outbox} o SET lease_owner = $1, lease_until = $2, updated_at = $3
     FROM due WHERE o.id = due.id
     RETURNING ${CLAIMED_COLUMNS}`,
    values: [
      o.owner,
      o.now + o.leaseMs,
      o.now,
      o.statuses ?? ["pending"],
      o.categories ?? null,
      o.inStreamOrder === true,
      sqlLimit(o.limit),
      ...(o.slices === undefined ? [] : [o.slices]),
    ],
  };
}

export async function claimOutbox(q: Queryable, t: Tables, o: ClaimOptions): Promise<OutboxRow[]> {
  const { text, values } = claimStatement(t, o);
  const result = await q.query(text, values);
  return result.rows.map(outboxRow).sort((a, b) => a.seq - b.seq);
}

export async function listOutbox(q: Queryable, t: Tables, f: OutboxFilter): Promise<OutboxRow[]> {
  const statuses = f.status === undefined ? null : Array.isArray(f.status) ? f.status : [f.status];
  const result = await q.query(
    `SELECT ${OUTBOX_COLUMNS} FROM ${t.outbox}
     WHERE ($1::text[] IS NULL OR status = ANY($1::text[]))
       AND ($2::text IS NULL OR category = $2::text)
       AND ($3::text IS NULL OR kind = $3::text)
       AND ($4::text IS NULL OR stream = $4::text)
     ORDER BY seq LIMIT $5`,
    [statuses, f.category ?? null, f.kind ?? null, f.stream ?? null, sqlLimit(f.limit)],
  );
  return result.rows.map(outboxRow);
}
