/**
 * Column lists of the PostgreSQL tables. JSON columns are selected as text, so results do not
 * depend on a pool's type parsers; the decoders are shared with SQLite (src/journal/sql-rows.ts).
 */
export const EVENT_COLUMNS =
  "stream, version, event_id, type, data::text AS data, causation_id, correlation_id, recorded_at, schema_version";
export const SNAPSHOT_COLUMNS = "stream, version, schema_version, state::text AS state, taken_at";
/** Unqualified on purpose: usable as `RETURNING` of an UPDATE on the outbox. */
export const OUTBOX_COLUMNS =
  "id, seq, category, kind, stream, payload::text AS payload, status, attempts, not_before, lease_owner, lease_until, last_error, outcome, result::text AS result, created_at, updated_at";
export const PARKED_COLUMNS = "consumer, source, version, message::text AS message, parked_at";
export const DEAD_LETTER_COLUMNS =
  "id, consumer, message_id, payload::text AS payload, error, stack, attempts, first_failed_at, last_failed_at, status, resolved_at";
export const DOCUMENT_COLUMNS = "collection, id, doc::text AS doc, updated_at";
