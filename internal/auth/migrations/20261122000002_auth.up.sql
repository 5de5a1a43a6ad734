-- Organizations own keys and, through later migrations, every feed, source
-- attachment, webhook and feedback (D3). Names are unique because the
-- operator addresses an organization by name in `feedsvc keys create --org`.
CREATE TABLE IF NOT EXISTS organizations (
    id         uuid        PRIMARY KEY,
    name       text        NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT organizations_name_key UNIQUE (name),
    CONSTRAINT organizations_name_check CHECK (btrim(name) <> '')
);
--bun:split
-- API keys. A key is fsk_<prefix>_<secret>: prefix is public and finds the
-- row; only SHA-256 of the secret is kept, so a leaked table grants nothing.
CREATE TABLE IF NOT EXISTS api_keys (
    id              uuid        PRIMARY KEY,
    organization_id uuid        NOT NULL REFERENCES organizations (id),
    prefix          text        NOT NULL,
    secret_hash     bytea       NOT NULL,
    scopes          text[]      NOT NULL,
    created_at      timestamptz NOT NULL DEFAULT now(),
    expires_at      timestamptz,
    revoked_at      timestamptz,
    last_used_at    timestamptz,
    CONSTRAINT api_keys_prefix_key UNIQUE (prefix),
    CONSTRAINT api_keys_secret_hash_check CHECK (octet_length(secret_hash) = 32)
);
--bun:split
-- Listing keys per organization (`feedsvc keys list --org`).
CREATE INDEX IF NOT EXISTS api_keys_organization_id_idx ON api_keys (organization_id);
