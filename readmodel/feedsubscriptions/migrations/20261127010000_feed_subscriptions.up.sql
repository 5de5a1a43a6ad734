-- The secret subscription addresses of feeds (readmodel/feedsubscriptions):
-- a token's prefix finds its row, whose secret_hash (SHA-256 of the
-- token's secret) it must match. A revoked address's row is deleted.
CREATE TABLE IF NOT EXISTS feed_subscriptions (
    id              uuid        PRIMARY KEY,
    organization_id uuid        NOT NULL,
    feed_kind       text        NOT NULL,
    feed_id         uuid        NOT NULL,
    prefix          text        NOT NULL UNIQUE,
    secret_hash     bytea       NOT NULL,
    created_at      timestamptz NOT NULL
);
--bun:split
CREATE INDEX IF NOT EXISTS feed_subscriptions_feed_idx ON feed_subscriptions (feed_id, created_at);
