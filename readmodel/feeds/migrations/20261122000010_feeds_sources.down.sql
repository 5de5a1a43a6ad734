DROP TABLE IF EXISTS source_organizations;
--bun:split
DROP TABLE IF EXISTS sources;
--bun:split
DROP TABLE IF EXISTS news_feed_sources;
--bun:split
DROP TABLE IF EXISTS news_feeds;
