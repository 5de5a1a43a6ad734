-- One read model for feeds of every kind: news_feeds and news_feed_sources
-- become feeds and feed_sources with a kind column, and event feeds' own
-- members (who enabled them and why, their config). Existing rows are news
-- feeds; the projector keeps its checkpoint under its new name.
ALTER TABLE news_feeds RENAME TO feeds;
--bun:split
ALTER INDEX news_feeds_pkey RENAME TO feeds_pkey;
--bun:split
DROP INDEX IF EXISTS news_feeds_org_created_idx;
--bun:split
ALTER TABLE feeds
    ADD COLUMN kind           text NOT NULL DEFAULT 'news',
    ADD COLUMN enabled_by     text NOT NULL DEFAULT '',
    ADD COLUMN enabled_reason text NOT NULL DEFAULT '',
    ADD COLUMN config         jsonb;
--bun:split
CREATE INDEX IF NOT EXISTS feeds_org_kind_created_idx ON feeds (organization_id, kind, created_at DESC, id DESC);
--bun:split
ALTER TABLE news_feed_sources RENAME TO feed_sources;
--bun:split
ALTER INDEX news_feed_sources_pkey RENAME TO feed_sources_pkey;
--bun:split
ALTER INDEX news_feed_sources_feed_idx RENAME TO feed_sources_feed_idx;
--bun:split
ALTER INDEX news_feed_sources_source_idx RENAME TO feed_sources_source_idx;
--bun:split
ALTER TABLE feed_sources ADD COLUMN kind text NOT NULL DEFAULT 'news';
--bun:split
UPDATE projection_checkpoints SET name = 'feeds' WHERE name = 'newsfeeds';
