-- Webhooks (issue 8). webhooks is the read model of subscriptions (the
-- webhooks projector); webhook_routes is the same rows as the dispatcher
-- sees them, kept at its own position in the log, so that an item-added
-- event is matched against the subscriptions as they stood when it was
-- added and the sender never meets a webhook its dispatcher has not. The
-- other tables are the sender's operational state, not read models: the
-- signing secrets (kept out of the event log), the delivery log with every
-- attempt and each event's body, and each webhook's failure streak.
CREATE TABLE IF NOT EXISTS webhooks (
    id                   uuid PRIMARY KEY,
    organization_id      uuid NOT NULL,
    url                  text NOT NULL,
    events               text[] NOT NULL,
    event_feed_ids       text[] NOT NULL,
    enabled              boolean NOT NULL,
    enabled_by           text NOT NULL,
    enabled_reason       text NOT NULL DEFAULT '',
    secret_id            uuid NOT NULL,
    previous_secret_id   uuid,
    previous_valid_until timestamptz,
    created_at           timestamptz NOT NULL,
    updated_at           timestamptz NOT NULL
);
--bun:split
CREATE INDEX IF NOT EXISTS webhooks_org_created_idx ON webhooks (organization_id, created_at DESC, id DESC);
--bun:split
-- The dispatcher's copy: the same columns, written by the same handlers.
CREATE TABLE IF NOT EXISTS webhook_routes (LIKE webhooks INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING INDEXES);
--bun:split
CREATE TABLE IF NOT EXISTS webhook_secrets (
    id              uuid PRIMARY KEY,
    organization_id uuid NOT NULL,
    secret          text NOT NULL,
    created_at      timestamptz NOT NULL DEFAULT now()
);
--bun:split
CREATE TABLE IF NOT EXISTS webhook_deliveries (
    id              uuid PRIMARY KEY,
    webhook_id      uuid NOT NULL,
    organization_id uuid NOT NULL,
    event_id        uuid NOT NULL,
    event           text NOT NULL,
    event_feed_id   uuid NOT NULL,
    item_id         uuid NOT NULL,
    status          text NOT NULL,
    runs            integer NOT NULL DEFAULT 1,
    created_at      timestamptz NOT NULL,
    updated_at      timestamptz NOT NULL,
    UNIQUE (webhook_id, event_id)
);
--bun:split
CREATE INDEX IF NOT EXISTS webhook_deliveries_webhook_created_idx ON webhook_deliveries (webhook_id, created_at DESC, id DESC);
--bun:split
CREATE INDEX IF NOT EXISTS webhook_deliveries_event_idx ON webhook_deliveries (event_id);
--bun:split
-- The body of an event's deliveries, once for all its webhooks.
CREATE TABLE IF NOT EXISTS webhook_payloads (
    event_id   uuid PRIMARY KEY,
    body       text NOT NULL,
    created_at timestamptz NOT NULL
);
--bun:split
CREATE TABLE IF NOT EXISTS webhook_attempts (
    id          bigserial PRIMARY KEY,
    delivery_id uuid NOT NULL REFERENCES webhook_deliveries (id) ON DELETE CASCADE,
    run         integer NOT NULL,
    at          timestamptz NOT NULL,
    status_code integer,
    error       text NOT NULL DEFAULT '',
    duration_ms integer NOT NULL
);
--bun:split
CREATE INDEX IF NOT EXISTS webhook_attempts_delivery_idx ON webhook_attempts (delivery_id, id);
--bun:split
CREATE TABLE IF NOT EXISTS webhook_health (
    webhook_id    uuid PRIMARY KEY,
    failing_since timestamptz
);
