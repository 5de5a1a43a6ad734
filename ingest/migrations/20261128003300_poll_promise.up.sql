-- The poll interval is a promise (issue 33, ingest/schedule.go): every
-- source is checked at least once per FEEDSVC_POLL_INTERVAL unless its
-- site asks for less, busy sources sooner.
--
-- interval_reason is why the next poll is when it is (the source's polling
-- block, intervalReason); freshness_reason is which signal of the site
-- freshness_ms came from. freshness_ms is cleared: it used to mix a site's
-- Retry-After in with its cache hints, and is heard again at the next poll
-- (a feed's ttl at the next poll that reads the feed in full; until then
-- the source is polled at its interval, which keeps the promise).
--
-- scheduled_at is when the crawler first took the source, watched_since
-- when its first complete crawl ended: the articles the crawler found in
-- between, dated when they were found for want of a date of their own,
-- say nothing about how often the source publishes, and its observed
-- interval leaves them out. Rows of sources taken before this version get
-- the time of this migration.
ALTER TABLE IF EXISTS crawl_state
    ADD COLUMN IF NOT EXISTS interval_reason  text,
    ADD COLUMN IF NOT EXISTS freshness_reason text,
    ADD COLUMN IF NOT EXISTS scheduled_at     timestamptz NOT NULL DEFAULT now(),
    ADD COLUMN IF NOT EXISTS watched_since    timestamptz;
--bun:split
UPDATE crawl_state SET freshness_ms = NULL WHERE freshness_ms IS NOT NULL;
