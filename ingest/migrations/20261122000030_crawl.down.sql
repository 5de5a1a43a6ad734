DROP TABLE IF EXISTS ingest_backfills;
--bun:split
DROP TABLE IF EXISTS crawl_listings;
--bun:split
DROP TABLE IF EXISTS crawl_failures;
--bun:split
DROP TABLE IF EXISTS crawl_seen;
--bun:split
DROP TABLE IF EXISTS crawl_state;
