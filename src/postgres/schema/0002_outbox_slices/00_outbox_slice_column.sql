-- Each outbox row's slice (src/journal/outbox-slice.ts), so that a worker claims only the rows of the
-- slices it owns. The commit functions, re-created by this migration, insert it as the client
-- computed it among the journal's `sliceCount`; outbox_slices_backfill.sql (which runs after the
-- functions it uses: files run in name order) sets it on the rows already there.
-- ADD COLUMN with a constant default rewrites no row; the backfill then drops the default, so that
-- an insert that forgot the slice fails instead of landing in slice 0.
ALTER TABLE ${schema}.outbox ADD COLUMN slice integer NOT NULL DEFAULT 0;
-- A claim for some slices (`slice = ANY(...)`) seeks each owned slice's due rows here, instead of
-- reading every due row of every slice in the claim index and dropping the others': with a backlog
-- in slices this worker does not own (a dead worker's, not yet taken over), that read grew with it.
-- Like the claim index, it holds only unfinished rows.
CREATE INDEX outbox_claim_slice ON ${schema}.outbox (slice, status, not_before) WHERE status NOT IN ('done', 'dead');
