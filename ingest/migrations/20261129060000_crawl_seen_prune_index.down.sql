DROP INDEX IF EXISTS crawl_seen_seen_at_idx;
