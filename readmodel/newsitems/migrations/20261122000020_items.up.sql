-- News items per feed, the shared articles behind them, feedback, and the
-- attachment view the crawler schedules from. All are projections.
CREATE TABLE IF NOT EXISTS news_items (
    id              uuid PRIMARY KEY,
    feed_id         uuid        NOT NULL,
    organization_id uuid        NOT NULL,
    news_page_id    uuid        NOT NULL,
    version_id      uuid        NOT NULL,
    source_id       uuid        NOT NULL,
    attachment_id   uuid        NOT NULL,
    source_type     text        NOT NULL,
    url             text        NOT NULL,
    title           text        NOT NULL DEFAULT '',
    description     text        NOT NULL DEFAULT '',
    image_url       text        NOT NULL DEFAULT '',
    published_at    timestamptz,
    created_at      timestamptz NOT NULL,
    updated_at      timestamptz NOT NULL
);
--bun:split
CREATE UNIQUE INDEX IF NOT EXISTS news_items_feed_page_key ON news_items (feed_id, news_page_id);
--bun:split
CREATE INDEX IF NOT EXISTS news_items_feed_order_idx ON news_items (feed_id, created_at DESC, published_at DESC NULLS LAST, id DESC);
--bun:split
CREATE TABLE IF NOT EXISTS news_feed_item_counts (
    feed_id uuid PRIMARY KEY,
    items   bigint NOT NULL
);
--bun:split
CREATE TABLE IF NOT EXISTS articles (
    id            uuid PRIMARY KEY,
    url           text        NOT NULL,
    title         text        NOT NULL DEFAULT '',
    description   text        NOT NULL DEFAULT '',
    image_url     text        NOT NULL DEFAULT '',
    published_at  timestamptz,
    effective_at  timestamptz NOT NULL,
    version_id    uuid        NOT NULL,
    discovered_at timestamptz NOT NULL
);
--bun:split
CREATE TABLE IF NOT EXISTS article_sources (
    source_id    uuid        NOT NULL,
    article_id   uuid        NOT NULL,
    effective_at timestamptz NOT NULL,
    PRIMARY KEY (source_id, article_id)
);
--bun:split
CREATE INDEX IF NOT EXISTS article_sources_recent_idx ON article_sources (source_id, effective_at DESC);
--bun:split
CREATE TABLE IF NOT EXISTS news_item_feedback (
    id              uuid PRIMARY KEY,
    item_id         uuid        NOT NULL,
    feed_id         uuid        NOT NULL,
    organization_id uuid        NOT NULL,
    news_page_id    uuid        NOT NULL,
    source_id       uuid        NOT NULL,
    rating          text        NOT NULL,
    comment         text        NOT NULL DEFAULT '',
    created_at      timestamptz NOT NULL
);
--bun:split
CREATE INDEX IF NOT EXISTS news_item_feedback_item_idx ON news_item_feedback (item_id);
--bun:split
CREATE TABLE IF NOT EXISTS feedback_counts (
    scope    text   NOT NULL,
    scope_id uuid   NOT NULL,
    positive bigint NOT NULL DEFAULT 0,
    negative bigint NOT NULL DEFAULT 0,
    neutral  bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (scope, scope_id)
);
--bun:split
CREATE TABLE IF NOT EXISTS ingest_attachments (
    attachment_id   uuid PRIMARY KEY,
    feed_id         uuid        NOT NULL,
    organization_id uuid        NOT NULL,
    source_id       uuid        NOT NULL,
    source_type     text        NOT NULL,
    details         jsonb       NOT NULL,
    source_enabled  boolean     NOT NULL,
    feed_enabled    boolean     NOT NULL,
    active_since    timestamptz NOT NULL,
    attached_at     timestamptz NOT NULL
);
--bun:split
CREATE INDEX IF NOT EXISTS ingest_attachments_source_idx ON ingest_attachments (source_id);
--bun:split
CREATE INDEX IF NOT EXISTS ingest_attachments_feed_idx ON ingest_attachments (feed_id);
--bun:split
CREATE TABLE IF NOT EXISTS ingest_feeds (
    feed_id uuid PRIMARY KEY,
    enabled boolean NOT NULL
);
