import { takesNoEffects } from "../journal/rows.js";
import { outboxRow } from "../journal/sql-rows.js";
import type { ClaimOptions, OutboxFilter, OutboxRow, OutboxUpdate } from "../journal/types.js";
import { type Sql, sqliteLimit } from "./sql.js";

/**
 * Select the due rows and take their lease in one statement, run by the caller inside
 * `BEGIN IMMEDIATE`: no other connection can claim between our read and our write.
 * `inStreamOrder` skips a row while an earlier row of its stream and category is unfinished. Both
 * indexes it reads hold only unfinished rows, and the stream-order one no effect rows (migration
 * 13): the statement says `status NOT IN ('done', 'dead')` (and, for a claim that can take no
 * effect, `category <> 'effect'`) in the same words, which is how SQLite lets a partial index serve.
 */
export function claimOutbox(sql: Sql, o: ClaimOptions): OutboxRow[] {
  // Only a claim for some slices names them: one for every slice runs today's statement unchanged.
  const rows = sql.stmt(claimSql(o)).all(claimParameters(o));
  return rows.map(outboxRow).sort((a, b) => a.seq - b.seq);
}

/** The claim statement (exported for the plan test). */
export const claimSql = (o: ClaimOptions): string =>
  `UPDATE outbox SET lease_owner = @owner, lease_until = @leaseUntil, updated_at = @now
       WHERE id IN (
         SELECT c.id FROM outbox c
         WHERE c.status IN (SELECT value FROM json_each(@statuses)) AND c.status NOT IN ('done', 'dead')
           AND (@categories IS NULL OR c.category IN (SELECT value FROM json_each(@categories)))
           AND c.not_before <= @now
           AND (c.lease_until IS NULL OR c.lease_until <= @now)${
             o.slices === undefined ? "" : "\n           AND c.slice IN (SELECT value FROM json_each(@slices))"
           }
           AND (@ordered = 0 OR NOT EXISTS (
             SELECT 1 FROM outbox e
             WHERE e.stream = c.stream AND e.category = c.category AND e.seq < c.seq
               AND e.status NOT IN ('done', 'dead')${takesNoEffects(o) ? " AND e.category <> 'effect'" : ""}))
         ORDER BY c.seq LIMIT @limit)
       RETURNING *`;

/** Its named parameters. */
export const claimParameters = (o: ClaimOptions) => ({
  owner: o.owner,
  leaseUntil: o.now + o.leaseMs,
  now: o.now,
  statuses: JSON.stringify(o.statuses ?? ["pending"]),
  categories: o.categories ? JSON.stringify(o.categories) : null,
  ordered: o.inStreamOrder ? 1 : 0,
  limit: sqliteLimit(o.limit),
  ...(o.slices === undefined ? {} : { slices: JSON.stringify(o.slices) }),
});

/**
 * Apply an update to a row that is not done; with `owner`, only while that owner holds the lease.
 * Returns the row's new status, or undefined when nothing matched.
 */
export function updateOutbox(
  sql: Sql,
  id: string,
  owner: string | null,
  u: OutboxUpdate,
  now: number,
): string | undefined {
  const row = sql
    .stmt(
      `UPDATE outbox SET
         status = coalesce(@status, status),
         attempts = coalesce(@attempts, attempts),
         not_before = coalesce(@notBefore, not_before),
         last_error = CASE WHEN @setLastError THEN @lastError ELSE last_error END,
         outcome = CASE WHEN @setOutcome THEN @outcome ELSE outcome END,
         result = CASE WHEN @setResult THEN @result ELSE result END,
         lease_owner = CASE WHEN @release THEN NULL ELSE lease_owner END,
         lease_until = CASE WHEN @release THEN NULL ELSE lease_until END,
         updated_at = @now
       WHERE id = @id AND (@owner IS NULL OR lease_owner = @owner) AND status <> 'done'
       RETURNING status`,
    )
    .get({
      id,
      owner,
      now,
      status: u.status ?? null,
      attempts: u.attempts ?? null,
      notBefore: u.notBefore ?? null,
      setLastError: u.lastError !== undefined ? 1 : 0,
      lastError: u.lastError ?? null,
      setOutcome: u.outcome !== undefined ? 1 : 0,
      outcome: u.outcome ?? null,
      setResult: u.result !== undefined ? 1 : 0,
      result: u.result !== undefined ? JSON.stringify(u.result) : null,
      release: (u.releaseLease ?? true) ? 1 : 0,
    }) as { status: string } | undefined;
  return row?.status;
}

export function getOutbox(sql: Sql, id: string): OutboxRow | undefined {
  const row = sql.stmt("SELECT * FROM outbox WHERE id = ?").get(id);
  return row ? outboxRow(row) : undefined;
}

export function listOutbox(sql: Sql, f: OutboxFilter): OutboxRow[] {
  const statuses = f.status === undefined ? null : Array.isArray(f.status) ? f.status : [f.status];
  return sql
    .stmt(
      `SELECT * FROM outbox
       WHERE (@statuses IS NULL OR status IN (SELECT value FROM json_each(@statuses)))
         AND (@category IS NULL OR category = @category)
         AND (@kind IS NULL OR kind = @kind)
         AND (@stream IS NULL OR stream = @stream)
       ORDER BY seq LIMIT @limit`,
    )
    .all({
      statuses: statuses ? JSON.stringify(statuses) : null,
      category: f.category ?? null,
      kind: f.kind ?? null,
      stream: f.stream ?? null,
      limit: sqliteLimit(f.limit),
    })
    .map(outboxRow);
}
