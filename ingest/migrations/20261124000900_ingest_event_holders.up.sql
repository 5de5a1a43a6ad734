-- Which document has the word on each event (crawler state, like the other
-- ingest_* tables: nothing rebuilds it, and losing it costs one change
-- per event whose documents disagree). Two documents that hold one event
-- with different wording (a page and its .ics) would otherwise change it
-- back and forth on every poll; the holder's finding is recorded, the
-- others only report the event as found. A document of higher precedence
-- (extract/events.Precedence) takes the event over; one that no longer
-- holds it lets it go.
CREATE TABLE IF NOT EXISTS ingest_event_holders (
    event_id   uuid     PRIMARY KEY,
    url        text     NOT NULL,
    precedence smallint NOT NULL
);
--bun:split
CREATE INDEX IF NOT EXISTS ingest_event_holders_url ON ingest_event_holders (url);
