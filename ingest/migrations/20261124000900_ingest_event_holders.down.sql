DROP TABLE IF EXISTS ingest_event_holders;
