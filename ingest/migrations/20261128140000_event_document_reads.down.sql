ALTER TABLE ingest_event_documents
    DROP COLUMN IF EXISTS etag,
    DROP COLUMN IF EXISTS last_modified,
    DROP COLUMN IF EXISTS digest,
    DROP COLUMN IF EXISTS read_at,
    DROP COLUMN IF EXISTS accepting_since,
    DROP COLUMN IF EXISTS distrusted_at;
