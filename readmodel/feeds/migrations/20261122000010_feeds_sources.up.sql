-- Read models of news feeds, their source attachments and source records.
-- Projectors own these tables; `feedsvc projections rebuild` recreates them
-- from the event store. No foreign keys: a rebuild swaps tables one by one.
CREATE TABLE IF NOT EXISTS news_feeds (
    id              uuid PRIMARY KEY,
    organization_id uuid        NOT NULL,
    name            text        NOT NULL,
    description     text        NOT NULL,
    enabled         boolean     NOT NULL,
    created_at      timestamptz NOT NULL,
    updated_at      timestamptz NOT NULL
);
--bun:split
CREATE INDEX IF NOT EXISTS news_feeds_org_created_idx ON news_feeds (organization_id, created_at DESC, id DESC);
--bun:split
CREATE TABLE IF NOT EXISTS news_feed_sources (
    id              uuid PRIMARY KEY,
    feed_id         uuid        NOT NULL,
    organization_id uuid        NOT NULL,
    source_id       uuid        NOT NULL,
    source_type     text        NOT NULL,
    details         jsonb       NOT NULL,
    enabled         boolean     NOT NULL,
    created_at      timestamptz NOT NULL,
    updated_at      timestamptz NOT NULL
);
--bun:split
CREATE INDEX IF NOT EXISTS news_feed_sources_feed_idx ON news_feed_sources (feed_id, created_at DESC, id DESC);
--bun:split
CREATE INDEX IF NOT EXISTS news_feed_sources_source_idx ON news_feed_sources (source_id);
--bun:split
CREATE TABLE IF NOT EXISTS sources (
    id          uuid PRIMARY KEY,
    source_type text        NOT NULL,
    details     jsonb       NOT NULL,
    created_at  timestamptz NOT NULL
);
--bun:split
CREATE TABLE IF NOT EXISTS source_organizations (
    source_id       uuid        NOT NULL,
    organization_id uuid        NOT NULL,
    linked_at       timestamptz NOT NULL,
    PRIMARY KEY (organization_id, source_id)
);
