TRUNCATE ingest_attachments, ingest_feeds;
--bun:split
UPDATE projection_checkpoints SET commit_position = 0, prepare_position = 0, updated_at = now() WHERE name = 'ingestion';
--bun:split
ALTER TABLE ingest_attachments
    DROP COLUMN feed_kind,
    DROP COLUMN source_enabled_at,
    DROP COLUMN feed_enabled_at,
    ADD COLUMN active_since timestamptz NOT NULL;
