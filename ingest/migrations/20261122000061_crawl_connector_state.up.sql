-- What a source's connector keeps between crawls (a site's discovered
-- sitemaps and feeds, for the web connector) is the connector's business:
-- one opaque JSON value per source instead of columns per source kind. It
-- is a cache, so the old site columns are dropped without copying.
--
-- backlog is set when the last crawl stopped at MaxFetchesPerCrawl: the
-- source is crawled again at once, and such a follow-up crawl leaves the
-- URLs that failed to the next regular poll, so that they are retried once
-- per poll as before rather than at every follow-up.
ALTER TABLE crawl_state
    ADD COLUMN IF NOT EXISTS connector_state jsonb,
    ADD COLUMN IF NOT EXISTS backlog boolean NOT NULL DEFAULT false,
    DROP COLUMN IF EXISTS site_base_url,
    DROP COLUMN IF EXISTS site_sitemaps,
    DROP COLUMN IF EXISTS site_feeds,
    DROP COLUMN IF EXISTS site_discovered_at;
