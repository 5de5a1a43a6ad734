ALTER TABLE IF EXISTS crawl_state
    DROP COLUMN IF EXISTS interval_reason,
    DROP COLUMN IF EXISTS freshness_reason,
    DROP COLUMN IF EXISTS scheduled_at,
    DROP COLUMN IF EXISTS watched_since;
