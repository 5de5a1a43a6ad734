DROP TABLE IF EXISTS rate_limit_windows;
--bun:split
ALTER TABLE api_keys DROP CONSTRAINT IF EXISTS api_keys_rate_check;
--bun:split
ALTER TABLE api_keys DROP COLUMN IF EXISTS rate_window_seconds, DROP COLUMN IF EXISTS rate_limit;
