ALTER TABLE IF EXISTS crawl_state
    DROP COLUMN IF EXISTS interval_ms,
    DROP COLUMN IF EXISTS observed_interval_ms,
    DROP COLUMN IF EXISTS freshness_ms;
