ALTER TABLE crawl_state
    DROP COLUMN IF EXISTS connector_state,
    DROP COLUMN IF EXISTS backlog,
    ADD COLUMN IF NOT EXISTS site_base_url text,
    ADD COLUMN IF NOT EXISTS site_sitemaps jsonb,
    ADD COLUMN IF NOT EXISTS site_feeds jsonb,
    ADD COLUMN IF NOT EXISTS site_discovered_at timestamptz;
