-- Adaptive polling: each source's interval follows how often it changes
-- (observed_interval_ms, a week over the articles it published, null when
-- it published none) and what its listings say about their own freshness
-- (freshness_ms: Cache-Control max-age, Expires, Retry-After, a feed's ttl
-- or sy:updatePeriod), between the crawler's floor and ceiling;
-- interval_ms is what the last successful poll chose, before jitter.
ALTER TABLE IF EXISTS crawl_state
    ADD COLUMN IF NOT EXISTS interval_ms          bigint,
    ADD COLUMN IF NOT EXISTS observed_interval_ms bigint,
    ADD COLUMN IF NOT EXISTS freshness_ms         bigint;
