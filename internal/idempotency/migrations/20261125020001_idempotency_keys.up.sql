-- Idempotency-Key: a write's first answer per organization and key, kept
-- 24 hours (idempotency.Store). seed makes every id the request mints a
-- function of the key, so a rerun finds its own events in the log;
-- lease_token and locked_until say which run owns the key while it runs.
-- Not a read model: nothing here comes from the event log.
CREATE TABLE IF NOT EXISTS idempotency_keys (
    organization_id uuid        NOT NULL,
    key             text        NOT NULL,
    fingerprint     bytea       NOT NULL,
    seed            bytea       NOT NULL,
    created_at      timestamptz NOT NULL,
    lease_token     uuid,
    locked_until    timestamptz,
    status          integer,
    headers         jsonb,
    body            bytea,
    PRIMARY KEY (organization_id, key),
    CONSTRAINT idempotency_keys_key_check CHECK (octet_length(key) BETWEEN 1 AND 255)
);
--bun:split
-- Expiry removes keys by age.
CREATE INDEX IF NOT EXISTS idempotency_keys_created_at_idx ON idempotency_keys (created_at);
