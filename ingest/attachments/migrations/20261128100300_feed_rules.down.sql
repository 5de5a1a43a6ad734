ALTER TABLE ingest_attachments DROP COLUMN IF EXISTS feed_rules;
--bun:split
ALTER TABLE ingest_feeds DROP COLUMN IF EXISTS rules;
