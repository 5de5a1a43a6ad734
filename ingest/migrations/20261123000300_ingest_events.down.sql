DROP TABLE IF EXISTS ingest_event_documents;
--bun:split
DROP TABLE IF EXISTS ingest_source_events;
