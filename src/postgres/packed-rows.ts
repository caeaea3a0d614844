/**
 * The packed wire format of a commit, as the client writes it (commit-batch.ts) and the server
 * reads it (schema/0002_outbox_slices: oncely_commit_set_packed by position, oncely_unpack): the commit is still an object, but its
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
 * and `->N`/`->>N` read exactly what `->'name'`/`->>'name'` read in the object format. The SQL files
 * spell the positions out; test/journal/postgres-packed.int.test.ts holds them to these lists.
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
  "slice",
] as const;
export const DONE_FIELDS = ["id", "outcome", "result"] as const;
/** Arrays left out of a packed commit when empty. */
export const RARE_ARRAYS = ["park", "unpark", "dead", "docs"] as const;
