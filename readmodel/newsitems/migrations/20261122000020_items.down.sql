DROP TABLE IF EXISTS ingest_feeds;
--bun:split
DROP TABLE IF EXISTS ingest_attachments;
--bun:split
DROP TABLE IF EXISTS feedback_counts;
--bun:split
DROP TABLE IF EXISTS news_item_feedback;
--bun:split
DROP TABLE IF EXISTS article_sources;
--bun:split
DROP TABLE IF EXISTS articles;
--bun:split
DROP TABLE IF EXISTS news_feed_item_counts;
--bun:split
DROP TABLE IF EXISTS news_items;
