DROP INDEX IF EXISTS ingest_attachments_changed_idx;
