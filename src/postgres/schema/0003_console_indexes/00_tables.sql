-- The console's pages (src/postgres/console-queries.ts): each filter an index whose last columns
-- are the page's sort key (created_at, seq for the outbox; last_failed_at, id for dead letters), so
-- a page reads limit + 1 entries of one index whatever the table's size. The open-rows index holds
-- unfinished rows only, in creation order (a row leaves it when done, as it leaves the claim index;
-- a status filter among them is checked while walking it): a page of done
-- rows walks the creation-order index instead. Dead letters' ids sort in the "C" collation, the
-- same order on every database whatever its locale. Readers of the published log are found by
-- source (the consumer-lag page).
CREATE INDEX outbox_page ON ${schema}.outbox (category, created_at, seq);
CREATE INDEX outbox_page_open ON ${schema}.outbox (category, created_at, seq)
  WHERE status NOT IN ('done', 'dead');
CREATE INDEX outbox_page_kind ON ${schema}.outbox (category, kind, created_at, seq);
CREATE INDEX outbox_page_stream ON ${schema}.outbox (stream, category, created_at, seq);
CREATE INDEX dead_letters_page ON ${schema}.dead_letters (last_failed_at, id COLLATE "C");
CREATE INDEX dead_letters_page_status ON ${schema}.dead_letters (status, last_failed_at, id COLLATE "C");
CREATE INDEX dead_letters_page_consumer ON ${schema}.dead_letters (consumer, status, last_failed_at, id COLLATE "C");
CREATE INDEX checkpoints_source ON ${schema}.checkpoints (source);
