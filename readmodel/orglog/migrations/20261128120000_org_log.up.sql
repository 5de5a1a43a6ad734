-- The organization's log (GET /log), owned by the orglog projector and
-- filled from the event log: per organization, the events that concern it,
-- at their global log position, so that its order is the log's. feed_ids
-- are the organization's feeds an event is about (empty for webhooks and
-- source records). The other tables are what the projector routes by: the
-- organization of each feed and webhook, the latest details of every
-- calendar event, and which of an organization's feeds carry a calendar
-- event through which attachment (a change reaches the feeds that carry it).
CREATE TABLE IF NOT EXISTS org_log (
    organization_id uuid        NOT NULL,
    log_commit      bigint      NOT NULL,
    log_prepare     bigint      NOT NULL,
    event_id        uuid        NOT NULL,
    event_type      text        NOT NULL,
    schema_version  integer     NOT NULL,
    feed_ids        uuid[]      NOT NULL,
    recorded_at     timestamptz NOT NULL,
    data            jsonb       NOT NULL,
    PRIMARY KEY (organization_id, log_commit, log_prepare)
);
--bun:split
CREATE TABLE IF NOT EXISTS org_log_feeds (
    feed_id         uuid PRIMARY KEY,
    organization_id uuid NOT NULL
);
--bun:split
CREATE TABLE IF NOT EXISTS org_log_webhooks (
    webhook_id      uuid PRIMARY KEY,
    organization_id uuid NOT NULL
);
--bun:split
CREATE TABLE IF NOT EXISTS org_log_happenings (
    happening_id uuid PRIMARY KEY,
    details      jsonb NOT NULL
);
--bun:split
CREATE TABLE IF NOT EXISTS org_log_happening_items (
    happening_id    uuid NOT NULL,
    feed_id         uuid NOT NULL,
    attachment_id   uuid NOT NULL,
    organization_id uuid NOT NULL,
    PRIMARY KEY (happening_id, feed_id, attachment_id)
);
--bun:split
CREATE INDEX IF NOT EXISTS org_log_happening_items_feed_idx ON org_log_happening_items (feed_id, attachment_id);
