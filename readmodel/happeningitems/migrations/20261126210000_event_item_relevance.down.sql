DROP TABLE IF EXISTS event_feed_configs;
--bun:split
ALTER TABLE event_items DROP COLUMN IF EXISTS relevance_score;
