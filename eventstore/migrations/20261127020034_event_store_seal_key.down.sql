ALTER TABLE event_store DROP COLUMN IF EXISTS seal_key_made_at;
--bun:split
ALTER TABLE event_store DROP COLUMN IF EXISTS seal_key;
