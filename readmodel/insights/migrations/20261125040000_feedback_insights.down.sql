DROP TABLE IF EXISTS insight_deleted_feeds;
--bun:split
DROP TABLE IF EXISTS insight_feedback;
--bun:split
DROP TABLE IF EXISTS insight_items;
