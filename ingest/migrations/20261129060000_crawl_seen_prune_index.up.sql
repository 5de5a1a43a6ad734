-- Every poll that lists something prunes the source's old seen URLs
-- (crawlstate.PruneSeen: seen_at older than the retention). With only the
-- (source_id, url) and (source_id, effective_at) indexes the delete read
-- every row of the source to test seen_at: a busy site's thousand rows at
-- each of its one-minute polls, 7 % of Postgres's statement time at 1,000
-- sites (bench/freshness, pg_stat_statements). On (source_id, seen_at) it
-- reads only what it deletes. crawl_seen takes a row per new URL, far
-- fewer than polls, so the index costs little to keep.
CREATE INDEX IF NOT EXISTS crawl_seen_seen_at_idx ON crawl_seen (source_id, seen_at);
