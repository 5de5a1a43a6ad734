DROP INDEX IF EXISTS ingest_backfills_pending_idx;
--bun:split
DROP INDEX IF EXISTS ingest_attachments_changed_idx;
