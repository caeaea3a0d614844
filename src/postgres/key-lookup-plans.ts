/**
 * Planner settings attached to the commit functions (migration 7). Every statement in them looks
 * rows up by key (stream, outbox id, inbox key) for a batch of a few dozen commits. Their plans are
 * cached per connection, and the planner cannot see how many rows a `jsonb_array_elements` or an
 * `unnest` of a variable yields (it guesses 100): planned while the outbox was small, the done-rows
 * UPDATE became a hash join over a sequential scan of the whole outbox, kept as the table grew
 * (measured: one full scan per batch, 15 million rows read for 6,000 orders, and a third of the
 * server's CPU). With these off, a key lookup is always an index probe, so the one generic plan
 * per statement is the right one for any batch, and planning it again for every call (the
 * default, for a statement with parameters) is wasted: `force_generic_plan`. The settings hold
 * only while the function runs (a function's SET clause is restored when it returns).
 */
export const KEY_LOOKUP_PLANS =
  "SET enable_seqscan = off SET enable_hashjoin = off SET enable_mergejoin = off SET plan_cache_mode = force_generic_plan";

/**
 * Migration 7: the outbox's claim and stream-order indexes hold only the rows still to run. A row
 * marked done (or dead) leaves them, so the UPDATE that finishes an effect writes two index
 * entries instead of four, and a claim never walks past finished rows however many the outbox
 * keeps. Both queries that use these indexes say `status NOT IN ('done', 'dead')` literally, so
 * the planner can prove the partial index applies.
 */
export const openRowIndexesSql = (qschema: string, outbox: string): string => `
  DROP INDEX ${qschema}.outbox_claim;
  CREATE INDEX outbox_claim ON ${outbox} (status, not_before) WHERE status NOT IN ('done', 'dead');
  DROP INDEX ${qschema}.outbox_stream_order;
  CREATE INDEX outbox_stream_order ON ${outbox} (stream, category, seq) WHERE status NOT IN ('done', 'dead');
`;

/**
 * Migration 13: the stream-order index holds no effect rows. Only claims `inStreamOrder` read it
 * (the event relay's, for events), and effect rows are the outbox's bulk: every effect an actor
 * requests paid an entry in it, at a random page (its stream), and nothing looked it up. A claim
 * that cannot be for effects says `category <> 'effect'` literally in its stream-order probe, so the
 * planner can prove the index applies (see outbox.ts); one for effects in stream order, which
 * nothing in oncely makes, is still answered, without this index. Measured with
 * `npm run bench -- replay --orders 4000`, nine pairs alternating: server CPU per batch 1.31 ms mean
 * against 1.36, lower in eight (a short replay; the index it no longer grows is the outbox's size).
 */
export const streamOrderWithoutEffectsSql = (qschema: string, outbox: string): string => `
  DROP INDEX ${qschema}.outbox_stream_order;
  CREATE INDEX outbox_stream_order ON ${outbox} (stream, category, seq)
    WHERE status NOT IN ('done', 'dead') AND category <> 'effect';
`;
