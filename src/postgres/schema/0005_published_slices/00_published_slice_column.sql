-- Each published-log entry's slice (docs/design/event-partitions.md): the slice of its producing
-- aggregate's id among the journal's `sliceCount`, so that a reader owning some slices reads only
-- theirs. The publish functions, re-created by this migration, insert it as the client computed it
-- (or compute it themselves for a client that passes none); published_slices_backfill.sql (which
-- runs after the functions it uses: files run in name order) sets it on the entries already there.
ALTER TABLE ${schema}.published ADD COLUMN slice integer NOT NULL DEFAULT 0;
-- A read of some slices after a position (`slice = ANY(...) AND position > ...`) seeks each owned
-- slice's entries here instead of walking every entry after the position and dropping the others'.
CREATE INDEX published_slice ON ${schema}.published (slice, position);
