-- The event store: one row per event. The global log is ordered by
-- (transaction_id, global_position); readers only read below
-- pg_snapshot_xmin(pg_current_snapshot()), so a transaction that commits
-- late can never be skipped by a reader that already moved past it.
CREATE TABLE IF NOT EXISTS events (
    global_position bigint GENERATED ALWAYS AS IDENTITY,
    transaction_id  xid8        NOT NULL DEFAULT pg_current_xact_id(),
    stream_id       text        NOT NULL,
    stream_revision bigint      NOT NULL,
    event_id        uuid        NOT NULL,
    event_type      text        NOT NULL,
    data            jsonb       NOT NULL,
    metadata        jsonb       NOT NULL DEFAULT '{}'::jsonb,
    recorded_at     timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (transaction_id, global_position),
    CONSTRAINT events_stream_revision_key UNIQUE (stream_id, stream_revision),
    CONSTRAINT events_event_id_key UNIQUE (event_id)
);
--bun:split
-- Each projector's position in the global log, written in the same
-- transaction as its read-model changes.
CREATE TABLE IF NOT EXISTS projection_checkpoints (
    name            text        PRIMARY KEY,
    commit_position bigint      NOT NULL DEFAULT 0,
    prepare_position bigint     NOT NULL DEFAULT 0,
    updated_at      timestamptz NOT NULL DEFAULT now()
);
