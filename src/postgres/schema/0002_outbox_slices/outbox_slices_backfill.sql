-- The slice of every row already in the outbox, by the same rule as the client's (oncely_outbox_slice),
-- among the slice count of the journal that runs this migration (${slice_count}): every worker of one
-- schema must be configured with the same count. Done rows are left at 0: nothing claims or revives
-- them (a dead row can be revived, so it is backfilled).
UPDATE ${schema}.outbox SET slice = ${schema}.oncely_outbox_slice(category, stream, payload, ${slice_count})
WHERE status <> 'done';
ALTER TABLE ${schema}.outbox ALTER COLUMN slice DROP DEFAULT;
