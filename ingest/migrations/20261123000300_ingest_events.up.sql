-- Crawler state for event feeds (operational, like crawl_seen: nothing
-- rebuilds it from events, and losing it costs only refetching, since
-- event and item appends are idempotent).

-- The events each source has found, with what the backfill of a new event
-- attachment judges them by, written before they are distributed (the
-- same ordering that keeps backfills from missing articles).
CREATE TABLE IF NOT EXISTS ingest_source_events (
    source_id  uuid        NOT NULL,
    event_id   uuid        NOT NULL,
    changed_at timestamptz NOT NULL,
    last_end   timestamptz NOT NULL,
    found_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (source_id, event_id)
);
--bun:split
-- Documents that held events (pages and calendars): re-read on every
-- regular poll, because events change in place (a new date, a
-- cancellation) where articles do not.
CREATE TABLE IF NOT EXISTS ingest_event_documents (
    source_id  uuid        NOT NULL,
    url        text        NOT NULL,
    checked_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (source_id, url)
);
