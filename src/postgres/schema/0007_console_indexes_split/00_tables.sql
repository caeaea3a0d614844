-- Fewer outbox indexes for the console's pages (src/postgres/console-queries.ts), so that a commit
-- pays fewer index entries. An UPDATE of an outbox row changes its status (a column of the claim
-- indexes' predicates), so it is never HOT: every index that holds the new row version gets an entry,
-- on each insert and again on each update. 0003 gave the outbox four page indexes, three of them over
-- every row, so an effect (inserted, then marked done) wrote 7 entries in them; these write 3.
--
-- Creation order is kept in two halves, each row in exactly one: outbox_page_open (0003: unfinished
-- rows, an entry at insert and at each update while open) and outbox_page_finished (done and dead
-- rows, one entry when a row finishes). A page of open rows walks the first, a page of finished rows
-- the second, and a page of any status reads up to limit + 1 entries of each and merges them. A kind
-- is checked while walking (as the text filter and Completed/Failed are); one owner's rows keep their
-- index (outbox_page_stream, 0003), since one owner among many would be a walk of the whole table.
DROP INDEX ${schema}.outbox_page;
DROP INDEX ${schema}.outbox_page_kind;
CREATE INDEX outbox_page_finished ON ${schema}.outbox (category, created_at, seq)
  WHERE status IN ('done', 'dead');
