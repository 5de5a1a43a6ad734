-- The version of the projector that built each read model: `feedsvc serve`
-- rebuilds a read model whose projector declares a newer one. Read models
-- that exist already were built by version 1, which every projector
-- declared first.
ALTER TABLE projection_checkpoints ADD COLUMN IF NOT EXISTS version integer NOT NULL DEFAULT 1;
--bun:split
-- The last rebuild of each projector, kept up to date while it runs, so
-- that `feedsvc projections list` in any process shows its progress.
CREATE TABLE IF NOT EXISTS projection_rebuilds (
    name        text        PRIMARY KEY,
    version     integer     NOT NULL,
    owner       text        NOT NULL,
    started_at  timestamptz NOT NULL,
    updated_at  timestamptz NOT NULL,
    events      bigint      NOT NULL DEFAULT 0,
    total       bigint,
    position    text        NOT NULL DEFAULT '0/0',
    finished_at timestamptz,
    error       text
);
