-- The ingestion read model carries each attachment's feed kind, which picks
-- the item writer, and, instead of an accepting-since date computed in SQL,
-- the facts domain.AcceptingSince reads: the attach time (already there)
-- and the latest time the source and the feed were enabled again. The
-- tables are emptied and the projector's checkpoint reset in the same
-- transaction, so the ingestion projector rebuilds them from the events.
TRUNCATE ingest_attachments, ingest_feeds;
--bun:split
UPDATE projection_checkpoints SET commit_position = 0, prepare_position = 0, updated_at = now() WHERE name = 'ingestion';
--bun:split
ALTER TABLE ingest_attachments
    ADD COLUMN feed_kind         text        NOT NULL DEFAULT 'news',
    ADD COLUMN source_enabled_at timestamptz,
    ADD COLUMN feed_enabled_at   timestamptz,
    DROP COLUMN active_since;
