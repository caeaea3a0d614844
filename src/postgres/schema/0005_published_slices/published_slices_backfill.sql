-- The slice of every entry already in the published log, by the same rule as a client's that passes
-- none (oncely_published_slice), among the slice count of the journal that runs this migration
-- (${slice_count}): every worker of one schema must be configured with the same count. The default
-- is then dropped, so that an insert that forgot the slice fails instead of landing in slice 0.
UPDATE ${schema}.published SET slice = ${schema}.oncely_published_slice(body, message_id, ${slice_count});
ALTER TABLE ${schema}.published ALTER COLUMN slice DROP DEFAULT;
