-- Event items: the events every feed shares, each feed's items, the
-- attachments that brought each item (an item is visible while one of them
-- is still attached), and the occurrences of the visible items, one row per
-- feed, item and occurrence. Range queries walk event_item_occurrences in
-- (feed, start) order: the index holds everything the list needs to filter,
-- order and count, so a feed's items are found without reading events.
-- end_at is the end as stated (none for an instant), ends_at when it is
-- over. prev_ends and prev_start are the latest end and the last start of
-- the item's earlier occurrences (in start order; year 1 for the first):
-- the one occurrence of an item in a range with no earlier one in it is the
-- item's first there, so a range's items are counted and ordered without
-- grouping its occurrences.
-- calendar_events also holds each event's members as both item shapes
-- render them (eventshape.Static, and the source block), so that a list
-- renders no event per request.
CREATE TABLE IF NOT EXISTS calendar_events (
    id                uuid PRIMARY KEY,
    source_id         uuid        NOT NULL,
    details           jsonb       NOT NULL,
    current_head      text        NOT NULL,
    current_published text        NOT NULL,
    current_tail      text        NOT NULL,
    legacy_head       text        NOT NULL,
    legacy_published  text        NOT NULL,
    legacy_tail       text        NOT NULL,
    source_block      text        NOT NULL,
    discovered_at     timestamptz NOT NULL,
    updated_at        timestamptz NOT NULL
);
--bun:split
CREATE TABLE IF NOT EXISTS event_items (
    id              uuid PRIMARY KEY,
    feed_id         uuid        NOT NULL,
    organization_id uuid        NOT NULL,
    event_id        uuid        NOT NULL,
    source_id       uuid        NOT NULL,
    source_type     text        NOT NULL,
    added_at        timestamptz NOT NULL,
    visible         boolean     NOT NULL
);
--bun:split
CREATE UNIQUE INDEX IF NOT EXISTS event_items_feed_event_key ON event_items (feed_id, event_id);
--bun:split
CREATE INDEX IF NOT EXISTS event_items_event_idx ON event_items (event_id);
--bun:split
CREATE TABLE IF NOT EXISTS event_item_attachments (
    item_id       uuid        NOT NULL,
    attachment_id uuid        NOT NULL,
    feed_id       uuid        NOT NULL,
    source_id     uuid        NOT NULL,
    source_type   text        NOT NULL,
    linked_at     timestamptz NOT NULL,
    PRIMARY KEY (item_id, attachment_id)
);
--bun:split
CREATE INDEX IF NOT EXISTS event_item_attachments_attachment_idx ON event_item_attachments (attachment_id);
--bun:split
CREATE INDEX IF NOT EXISTS event_item_attachments_feed_idx ON event_item_attachments (feed_id);
--bun:split
CREATE TABLE IF NOT EXISTS event_item_occurrences (
    feed_id          uuid        NOT NULL,
    item_id          uuid        NOT NULL,
    occurrence_id    uuid        NOT NULL,
    instance_id      uuid        NOT NULL,
    starts_at        timestamptz NOT NULL,
    end_at           timestamptz,
    ends_at          timestamptz NOT NULL,
    prev_ends        timestamptz NOT NULL,
    prev_start       timestamptz NOT NULL,
    status           text        NOT NULL,
    instance_ends_at timestamptz NOT NULL,
    added_at         timestamptz NOT NULL,
    PRIMARY KEY (item_id, occurrence_id)
);
--bun:split
CREATE INDEX IF NOT EXISTS event_item_occurrences_range_idx ON event_item_occurrences (feed_id, starts_at, item_id)
    INCLUDE (ends_at, prev_ends, prev_start, status, instance_ends_at, added_at);
--bun:split
CREATE TABLE IF NOT EXISTS event_feed_spans (
    feed_id uuid PRIMARY KEY,
    longest interval NOT NULL
);
--bun:split
CREATE TABLE IF NOT EXISTS event_detached_attachments (
    attachment_id uuid PRIMARY KEY
);
