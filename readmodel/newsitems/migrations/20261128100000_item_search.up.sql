-- Full-text search of items (issue 37), for news items here and event
-- items in happeningitems' migration after it.
--
-- unaccent (a contrib extension Postgres marks trusted: a database's owner
-- may create it) folds accents before stemming, so "cafe" finds "Café".
-- Each text search configuration feedsvc_<language> is Postgres's own for
-- the language with unaccent ahead of its stemmer; feedsvc_simple does not
-- stem, for text of no known language. unaccent is a dictionary of the
-- configurations rather than a function in the expressions, because
-- unaccent() is not immutable and a generated column's expression must be.
CREATE EXTENSION IF NOT EXISTS unaccent;
--bun:split
-- btree_gin (trusted too) lets one GIN index hold the feed and the words,
-- so a feed's matches are found without reading other feeds'.
CREATE EXTENSION IF NOT EXISTS btree_gin;
--bun:split
DO $$
DECLARE
    lang text;
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_ts_config WHERE cfgname = 'feedsvc_simple') THEN
        CREATE TEXT SEARCH CONFIGURATION feedsvc_simple (COPY = simple);
        ALTER TEXT SEARCH CONFIGURATION feedsvc_simple ALTER MAPPING FOR asciiword, asciihword, hword_asciipart, hword, hword_part, word WITH unaccent, simple;
    END IF;
    FOREACH lang IN ARRAY ARRAY['arabic', 'armenian', 'basque', 'catalan', 'danish', 'dutch', 'english', 'finnish', 'french', 'german', 'greek', 'hindi', 'hungarian', 'indonesian', 'irish', 'italian', 'lithuanian', 'nepali', 'norwegian', 'portuguese', 'romanian', 'russian', 'serbian', 'spanish', 'swedish', 'tamil', 'turkish', 'yiddish'] LOOP
        IF NOT EXISTS (SELECT 1 FROM pg_ts_config WHERE cfgname = 'feedsvc_' || lang) THEN
            EXECUTE format('CREATE TEXT SEARCH CONFIGURATION %I (COPY = %I)', 'feedsvc_' || lang, lang);
            EXECUTE format('ALTER TEXT SEARCH CONFIGURATION %I ALTER MAPPING FOR hword, hword_part, word WITH unaccent, %I', 'feedsvc_' || lang, lang || '_stem');
        END IF;
    END LOOP;
END
$$;
--bun:split
-- The configuration of an item's language (its primary subtag, as
-- domain.NewArticleContent stores it); feedsvc_simple when unknown.
CREATE OR REPLACE FUNCTION feedsvc_search_config(lang text) RETURNS regconfig
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT CASE
        WHEN lang = 'ar' THEN 'feedsvc_arabic'::regconfig
        WHEN lang = 'hy' THEN 'feedsvc_armenian'::regconfig
        WHEN lang = 'eu' THEN 'feedsvc_basque'::regconfig
        WHEN lang = 'ca' THEN 'feedsvc_catalan'::regconfig
        WHEN lang = 'da' THEN 'feedsvc_danish'::regconfig
        WHEN lang = 'nl' THEN 'feedsvc_dutch'::regconfig
        WHEN lang = 'en' THEN 'feedsvc_english'::regconfig
        WHEN lang = 'fi' THEN 'feedsvc_finnish'::regconfig
        WHEN lang = 'fr' THEN 'feedsvc_french'::regconfig
        WHEN lang = 'de' THEN 'feedsvc_german'::regconfig
        WHEN lang = 'el' THEN 'feedsvc_greek'::regconfig
        WHEN lang = 'hi' THEN 'feedsvc_hindi'::regconfig
        WHEN lang = 'hu' THEN 'feedsvc_hungarian'::regconfig
        WHEN lang = 'id' THEN 'feedsvc_indonesian'::regconfig
        WHEN lang = 'ga' THEN 'feedsvc_irish'::regconfig
        WHEN lang = 'it' THEN 'feedsvc_italian'::regconfig
        WHEN lang = 'lt' THEN 'feedsvc_lithuanian'::regconfig
        WHEN lang = 'ne' THEN 'feedsvc_nepali'::regconfig
        WHEN lang IN ('no', 'nb', 'nn') THEN 'feedsvc_norwegian'::regconfig
        WHEN lang = 'pt' THEN 'feedsvc_portuguese'::regconfig
        WHEN lang = 'ro' THEN 'feedsvc_romanian'::regconfig
        WHEN lang = 'ru' THEN 'feedsvc_russian'::regconfig
        WHEN lang = 'sr' THEN 'feedsvc_serbian'::regconfig
        WHEN lang = 'es' THEN 'feedsvc_spanish'::regconfig
        WHEN lang = 'sv' THEN 'feedsvc_swedish'::regconfig
        WHEN lang = 'ta' THEN 'feedsvc_tamil'::regconfig
        WHEN lang = 'tr' THEN 'feedsvc_turkish'::regconfig
        WHEN lang = 'yi' THEN 'feedsvc_yiddish'::regconfig
        ELSE 'feedsvc_simple'::regconfig
    END
$$;
--bun:split
-- A query (domain/search's canonical form, always a bound parameter) read
-- in every configuration at once: an item matching it in its own
-- configuration matches this, so the index finds a superset of the
-- matches with it, and the list checks each candidate in its own
-- configuration after.
CREATE OR REPLACE FUNCTION feedsvc_websearch_any(q text) RETURNS tsquery
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT websearch_to_tsquery('feedsvc_simple', q)
    || websearch_to_tsquery('feedsvc_arabic', q)
    || websearch_to_tsquery('feedsvc_armenian', q)
    || websearch_to_tsquery('feedsvc_basque', q)
    || websearch_to_tsquery('feedsvc_catalan', q)
    || websearch_to_tsquery('feedsvc_danish', q)
    || websearch_to_tsquery('feedsvc_dutch', q)
    || websearch_to_tsquery('feedsvc_english', q)
    || websearch_to_tsquery('feedsvc_finnish', q)
    || websearch_to_tsquery('feedsvc_french', q)
    || websearch_to_tsquery('feedsvc_german', q)
    || websearch_to_tsquery('feedsvc_greek', q)
    || websearch_to_tsquery('feedsvc_hindi', q)
    || websearch_to_tsquery('feedsvc_hungarian', q)
    || websearch_to_tsquery('feedsvc_indonesian', q)
    || websearch_to_tsquery('feedsvc_irish', q)
    || websearch_to_tsquery('feedsvc_italian', q)
    || websearch_to_tsquery('feedsvc_lithuanian', q)
    || websearch_to_tsquery('feedsvc_nepali', q)
    || websearch_to_tsquery('feedsvc_norwegian', q)
    || websearch_to_tsquery('feedsvc_portuguese', q)
    || websearch_to_tsquery('feedsvc_romanian', q)
    || websearch_to_tsquery('feedsvc_russian', q)
    || websearch_to_tsquery('feedsvc_serbian', q)
    || websearch_to_tsquery('feedsvc_spanish', q)
    || websearch_to_tsquery('feedsvc_swedish', q)
    || websearch_to_tsquery('feedsvc_tamil', q)
    || websearch_to_tsquery('feedsvc_turkish', q)
    || websearch_to_tsquery('feedsvc_yiddish', q)
$$;
--bun:split
-- An item's language (empty when the page did not say) and its words:
-- the title weighs more than the description when ranking by relevance.
ALTER TABLE news_items
    ADD COLUMN language text NOT NULL DEFAULT '',
    ADD COLUMN search tsvector GENERATED ALWAYS AS (
        setweight(to_tsvector(feedsvc_search_config(language), title), 'A')
        || setweight(to_tsvector(feedsvc_search_config(language), description), 'B')) STORED;
--bun:split
-- The shared articles keep the language too, so that a backfill offers
-- an article with it (readmodel/articles).
ALTER TABLE articles ADD COLUMN language text NOT NULL DEFAULT '';
--bun:split
CREATE INDEX IF NOT EXISTS news_items_search_idx ON news_items USING gin (feed_id, search);
