DROP INDEX IF EXISTS event_items_feed_change_idx;
--bun:split
ALTER TABLE event_items DROP COLUMN IF EXISTS change_commit, DROP COLUMN IF EXISTS change_prepare;
--bun:split
DROP INDEX IF EXISTS news_items_feed_change_idx;
--bun:split
ALTER TABLE news_items DROP COLUMN IF EXISTS change_commit, DROP COLUMN IF EXISTS change_prepare;
