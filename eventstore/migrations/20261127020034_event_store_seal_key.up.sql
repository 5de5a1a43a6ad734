-- The key that seals this installation's exports (issue 34): an HMAC key
-- of 32 random bytes, made by the first export (or `feedsvc events
-- seal-key`) like the store's id, not here (test databases copied from one
-- migrated template must not share it), replaced by `feedsvc events
-- seal-key --rotate`, and taken over from the file by an import whose seal
-- it checked with the key the operator gave, so that a moved installation
-- goes on sealing with the key it had.
ALTER TABLE event_store ADD COLUMN IF NOT EXISTS seal_key bytea;
--bun:split
ALTER TABLE event_store ADD COLUMN IF NOT EXISTS seal_key_made_at timestamptz;
