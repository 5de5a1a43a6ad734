-- Facts first (ingest/intake.go): until this version a document was read
-- only for the feed kinds attached to its source when it was crawled
-- (articles for news feeds, events for event feeds), and then marked seen,
-- so a source crawled for one kind holds no facts of the other. Forgetting
-- the recent seen marks and the listings' validators makes the next crawl
-- of every source list its documents of the 14-day window in full and read
-- each once more, now by every reader: a feed attached afterwards fills as
-- if the facts had always been recorded. Recording again what is already
-- recorded changes nothing (articles and events are idempotent, items too).
-- Given-up URLs (no distributed_at) stay given up.
DELETE FROM crawl_seen WHERE distributed_at IS NOT NULL AND seen_at >= now() - interval '14 days';
--bun:split
DELETE FROM crawl_listings;
--bun:split
UPDATE crawl_state SET next_at = now() WHERE next_at > now() AND failures = 0;
