DROP INDEX IF EXISTS news_items_search_idx;
--bun:split
ALTER TABLE news_items DROP COLUMN IF EXISTS search;
--bun:split
ALTER TABLE news_items ADD COLUMN search tsvector GENERATED ALWAYS AS (
    setweight(to_tsvector(feedsvc_search_config(language), title), 'A')
    || setweight(to_tsvector(feedsvc_search_config(language), description), 'B')) STORED;
--bun:split
CREATE INDEX IF NOT EXISTS news_items_search_idx ON news_items USING gin (feed_id, search);
--bun:split
DROP FUNCTION IF EXISTS feedsvc_websearch_exact(text);
--bun:split
DROP FUNCTION IF EXISTS feedsvc_news_search(text, text, text, text);
--bun:split
DROP FUNCTION IF EXISTS feedsvc_search_marker(text);
--bun:split
DROP TABLE IF EXISTS news_article_texts;
