-- WebSub subscriptions (ingest/websub): operational crawler state like
-- crawl_state; nothing rebuilds it from events, and losing it only costs
-- subscribing again on the next poll that reads the feed.
--
-- One row per (source, topic, hub). id is the callback's path segment
-- (FEEDSVC_PUBLIC_URL/websub/{id}), 32 random bytes: unguessable, so the
-- unauthenticated callback answers only a hub that was told it. secret is
-- the HMAC key of X-Hub-Signature; it is stored as is, not hashed, because
-- checking a signature recomputes the HMAC of each pushed body with it.
-- state is pending (never verified), active (the hub verified it; the lease
-- runs until lease_expires_at) or denied. pending_mode is the request
-- (subscribe or unsubscribe) sent to the hub and not yet verified: only
-- such a request is confirmed when the hub verifies intent. next_at is when
-- the crawler's loop next acts on the row: (re)send a request, renew the
-- lease, or unsubscribe once no feed has the source.
CREATE TABLE IF NOT EXISTS websub_subscriptions (
    id               text        PRIMARY KEY,
    source_id        uuid        NOT NULL,
    topic            text        NOT NULL,
    hub              text        NOT NULL,
    secret           text        NOT NULL,
    state            text        NOT NULL DEFAULT 'pending',
    pending_mode     text,
    requested_at     timestamptz,
    lease_seconds    integer,
    lease_expires_at timestamptz,
    verified_at      timestamptz,
    failures         integer     NOT NULL DEFAULT 0,
    last_error       text        NOT NULL DEFAULT '',
    next_at          timestamptz NOT NULL DEFAULT now(),
    created_at       timestamptz NOT NULL DEFAULT now(),
    UNIQUE (source_id, topic, hub)
);
--bun:split
CREATE INDEX IF NOT EXISTS websub_subscriptions_next_idx ON websub_subscriptions (next_at);
--bun:split
CREATE INDEX IF NOT EXISTS websub_subscriptions_source_idx ON websub_subscriptions (source_id);
--bun:split
-- Content a hub pushed with a valid signature, waiting for a crawler
-- process to ingest it (the callback may be served by an API process that
-- does not crawl). A crawler takes a row by deleting it; one that dies
-- while ingesting loses the push, which the next poll makes good.
CREATE TABLE IF NOT EXISTS websub_pushes (
    id              bigserial   PRIMARY KEY,
    subscription_id text        NOT NULL,
    body            bytea       NOT NULL,
    attempts        integer     NOT NULL DEFAULT 0,
    not_before      timestamptz NOT NULL DEFAULT now(),
    received_at     timestamptz NOT NULL DEFAULT now()
);
