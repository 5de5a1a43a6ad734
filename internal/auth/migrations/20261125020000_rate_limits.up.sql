-- A key's own request rate (feedsvc keys create --rate 600/min). NULL in
-- both: the service's default (FEEDSVC_RATE_LIMIT); a limit of 0: never
-- limited.
ALTER TABLE api_keys
    ADD COLUMN IF NOT EXISTS rate_limit          integer,
    ADD COLUMN IF NOT EXISTS rate_window_seconds integer;
--bun:split
ALTER TABLE api_keys DROP CONSTRAINT IF EXISTS api_keys_rate_check;
--bun:split
ALTER TABLE api_keys ADD CONSTRAINT api_keys_rate_check CHECK (
    (rate_limit IS NULL AND rate_window_seconds IS NULL)
    OR (rate_limit = 0 AND rate_window_seconds IS NULL)
    OR (rate_limit BETWEEN 1 AND 1000000000 AND rate_window_seconds BETWEEN 1 AND 86400)
);
--bun:split
-- Requests per key per fixed window, shared by every API process: one
-- upsert per request counts and reads. UNLOGGED because a counter is worth
-- no WAL: a transaction that writes only unlogged tables commits without
-- waiting for a WAL flush, and a crash forgets at most the current window's
-- counts. Rows are removed once their window has ended (API housekeeping).
CREATE UNLOGGED TABLE IF NOT EXISTS rate_limit_windows (
    key_id       uuid        NOT NULL,
    window_start timestamptz NOT NULL,
    ends_at      timestamptz NOT NULL,
    hits         integer     NOT NULL,
    PRIMARY KEY (key_id, window_start)
);
