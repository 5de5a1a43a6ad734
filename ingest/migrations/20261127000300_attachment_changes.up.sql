-- The crawler looks for never-crawled sources (attachments whose source
-- has no crawl_state row) on every tick. Over every attachment that is an
-- anti-join of the whole table with crawl_state (11 ms at 10,000 sources,
-- more than the polls of that tick cost); this index on when an attachment
-- last became crawlable (attached, or its source or feed re-enabled: the
-- facts of domain.AcceptingSince) lets each tick read only the attachments
-- that changed since the last look, and the whole table is read once a
-- minute for those whose event was projected late.
CREATE INDEX IF NOT EXISTS ingest_attachments_changed_idx
    ON ingest_attachments (greatest(attached_at, source_enabled_at, feed_enabled_at));
--bun:split
-- Likewise the backfills still to run (pendingBackfills): few, looked for
-- on every tick.
CREATE INDEX IF NOT EXISTS ingest_backfills_pending_idx ON ingest_backfills (attachment_id) WHERE done_at IS NULL;
