-- Each news feed's keyword rules (domain.FeedRules, issue 37), which the
-- crawler holds every article it offers to the feed to: on the feed, and
-- copied to each of its attachments so that an offer reads them with the
-- attachment. NULL when the feed has none.
ALTER TABLE ingest_feeds ADD COLUMN IF NOT EXISTS rules jsonb;
--bun:split
ALTER TABLE ingest_attachments ADD COLUMN IF NOT EXISTS feed_rules jsonb;
