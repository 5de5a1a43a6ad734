-- Who the event log is (issue 26). One row, made by the first export or
-- import that needs it (not here: test databases copied from one migrated
-- template must not share an identity). An export names its store; an
-- import records the store it came from, and whether it was a partial
-- (filtered) export, which `feedsvc serve` refuses to run on.
CREATE TABLE IF NOT EXISTS event_store (
    one           boolean     PRIMARY KEY DEFAULT true CHECK (one),
    id            uuid        NOT NULL,
    created_at    timestamptz NOT NULL DEFAULT now(),
    imported_from uuid,
    imported_at   timestamptz,
    -- The filters of the partial export this log was imported from, as
    -- the export's header gave them; NULL for a whole log.
    partial       jsonb
);
--bun:split
-- Where a moved installation's webhooks start (issue 26): the dispatcher
-- queues no delivery for an item added at or before this position, which
-- the installation the log was exported from delivered already.
-- `feedsvc events import` records it in the import's transaction (at the
-- imported log's end, or before the position --redeliver-from names).
CREATE TABLE IF NOT EXISTS webhook_delivered_through (
    one              boolean     PRIMARY KEY DEFAULT true CHECK (one),
    commit_position  bigint      NOT NULL,
    prepare_position bigint      NOT NULL,
    recorded_at      timestamptz NOT NULL DEFAULT now()
);
