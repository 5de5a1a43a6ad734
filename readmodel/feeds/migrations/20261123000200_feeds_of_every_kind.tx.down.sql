UPDATE projection_checkpoints SET name = 'newsfeeds' WHERE name = 'feeds';
--bun:split
DELETE FROM feed_sources WHERE kind <> 'news';
--bun:split
ALTER TABLE feed_sources DROP COLUMN kind;
--bun:split
ALTER INDEX feed_sources_source_idx RENAME TO news_feed_sources_source_idx;
--bun:split
ALTER INDEX feed_sources_feed_idx RENAME TO news_feed_sources_feed_idx;
--bun:split
ALTER INDEX feed_sources_pkey RENAME TO news_feed_sources_pkey;
--bun:split
ALTER TABLE feed_sources RENAME TO news_feed_sources;
--bun:split
DELETE FROM feeds WHERE kind <> 'news';
--bun:split
DROP INDEX IF EXISTS feeds_org_kind_created_idx;
--bun:split
ALTER TABLE feeds DROP COLUMN kind, DROP COLUMN enabled_by, DROP COLUMN enabled_reason, DROP COLUMN config;
--bun:split
CREATE INDEX IF NOT EXISTS news_feeds_org_created_idx ON feeds (organization_id, created_at DESC, id DESC);
--bun:split
ALTER INDEX feeds_pkey RENAME TO news_feeds_pkey;
--bun:split
ALTER TABLE feeds RENAME TO news_feeds;
