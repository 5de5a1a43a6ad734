-- An article's body text is searched too (issue 37), and a query is
-- answered by the (feed, words) index alone.
--
-- news_article_texts holds the first 8 KiB of each article's running text
-- (domain.ArticleContent.Text), as ArticleDiscovered records it: the items
-- of every feed that carries the article take their words from it, so a
-- rebuild from the log gives the same words. Articles recorded before
-- their text was have none here, and are found by title and description.
CREATE TABLE IF NOT EXISTS news_article_texts (
    news_page_id uuid PRIMARY KEY,
    text         text NOT NULL
);
--bun:split
-- An item's language is also a word of its own in its words: '@' and the
-- name of the configuration that read it ('@feedsvc_english'), which no
-- parser makes of a page's text. A query then names, for each
-- configuration, the items it applies to (feedsvc_websearch_exact), and
-- the index answers exactly, without reading each candidate's words again
-- in its own language. IMMUTABLE like to_tsvector(regconfig, text): the
-- configurations are this migration's and the previous one's.
CREATE OR REPLACE FUNCTION feedsvc_search_marker(lang text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT '@' || cfgname FROM pg_ts_config WHERE oid = feedsvc_search_config(lang)
$$;
--bun:split
-- An item's words: the title weighs most (A), then the description (B),
-- then the body (D), when ranking by relevance; a phrase never runs from
-- one into the next.
CREATE OR REPLACE FUNCTION feedsvc_news_search(lang text, title text, description text, body text) RETURNS tsvector
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT setweight(to_tsvector(feedsvc_search_config(lang), title), 'A')
        || setweight(to_tsvector(feedsvc_search_config(lang), description), 'B')
        || setweight(to_tsvector(feedsvc_search_config(lang), coalesce(body, '')), 'D')
        || array_to_tsvector(ARRAY[feedsvc_search_marker(lang)])
$$;
--bun:split
-- A query (domain/search's canonical form, a bound parameter) read in each
-- configuration, each reading required with its configuration's marker:
-- an item matches it exactly when it matches the query read in its own
-- language. A configuration in which the query is only stop words reads
-- nothing and is left out (an empty reading would match every item of the
-- language). The simple configuration has no stop words, so a query that
-- names a word always has at least its reading.
CREATE OR REPLACE FUNCTION feedsvc_websearch_exact(q text) RETURNS tsquery
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
DECLARE
    cfg    name;
    reading tsquery;
    result tsquery;
BEGIN
    FOR cfg IN SELECT cfgname FROM pg_ts_config WHERE cfgname LIKE 'feedsvc\_%' ORDER BY cfgname LOOP
        reading := websearch_to_tsquery(cfg::text::regconfig, q);
        CONTINUE WHEN numnode(reading) = 0;
        reading := quote_literal('@' || cfg)::tsquery && reading;
        result := CASE WHEN result IS NULL THEN reading ELSE result || reading END;
    END LOOP;
    RETURN result;
END
$$;
--bun:split
-- The words become a column the projector writes (they now come from two
-- tables); the rows already there keep theirs and gain their marker.
ALTER TABLE news_items ALTER COLUMN search DROP EXPRESSION;
--bun:split
DROP INDEX IF EXISTS news_items_search_idx;
--bun:split
UPDATE news_items SET search = search || array_to_tsvector(ARRAY[feedsvc_search_marker(language)]);
--bun:split
CREATE INDEX IF NOT EXISTS news_items_search_idx ON news_items USING gin (feed_id, search);
