DROP INDEX IF EXISTS news_items_search_idx;
--bun:split
ALTER TABLE news_items DROP COLUMN IF EXISTS search, DROP COLUMN IF EXISTS language;
--bun:split
ALTER TABLE articles DROP COLUMN IF EXISTS language;
--bun:split
DROP FUNCTION IF EXISTS feedsvc_websearch_any(text);
--bun:split
DROP FUNCTION IF EXISTS feedsvc_search_config(text);
--bun:split
DO $$
DECLARE
    cfg text;
BEGIN
    FOR cfg IN SELECT cfgname FROM pg_ts_config WHERE cfgname LIKE 'feedsvc\_%' LOOP
        EXECUTE format('DROP TEXT SEARCH CONFIGURATION %I', cfg);
    END LOOP;
END
$$;
