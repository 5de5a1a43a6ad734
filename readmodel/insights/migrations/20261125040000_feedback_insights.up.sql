-- Feedback insights (GET /insights/feedback), owned by the insights
-- projector and filled from the event log: every item ever added to a feed
-- (the denominator of "share of items rated") and every feedback entry,
-- with its place in the log to order ties and when its item was added (so
-- that a group's denominator needs no join per entry). A deleted feed's
-- rows are removed and the feed remembered, so an event of it that comes
-- later in the log is not counted either. Created empty: the projector
-- fills them from history (a new insight never migrates old data).
CREATE TABLE IF NOT EXISTS insight_items (
    item_id         uuid PRIMARY KEY,
    organization_id uuid        NOT NULL,
    feed_id         uuid        NOT NULL,
    feed_kind       text        NOT NULL,
    source_id       uuid        NOT NULL,
    added_at        timestamptz NOT NULL
);
--bun:split
CREATE INDEX IF NOT EXISTS insight_items_org_idx ON insight_items (organization_id, added_at);
--bun:split
CREATE INDEX IF NOT EXISTS insight_items_feed_idx ON insight_items (feed_id, added_at);
--bun:split
CREATE INDEX IF NOT EXISTS insight_items_source_idx ON insight_items (organization_id, source_id, added_at);
--bun:split
CREATE TABLE IF NOT EXISTS insight_feedback (
    feedback_id     uuid PRIMARY KEY,
    organization_id uuid        NOT NULL,
    feed_id         uuid        NOT NULL,
    feed_kind       text        NOT NULL,
    item_id         uuid        NOT NULL,
    source_id       uuid        NOT NULL,
    rating          text        NOT NULL,
    comment         text        NOT NULL,
    given_at        timestamptz NOT NULL,
    item_added_at   timestamptz,
    log_commit      bigint      NOT NULL,
    log_prepare     bigint      NOT NULL
);
--bun:split
CREATE INDEX IF NOT EXISTS insight_feedback_org_idx ON insight_feedback (organization_id, given_at);
--bun:split
CREATE INDEX IF NOT EXISTS insight_feedback_feed_idx ON insight_feedback (feed_id, given_at);
--bun:split
CREATE TABLE IF NOT EXISTS insight_deleted_feeds (
    feed_id uuid PRIMARY KEY
);
