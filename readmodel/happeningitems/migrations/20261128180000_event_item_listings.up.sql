-- One happening, several listings (issue 36): an event item whose
-- happening other sources of its feed list too (EventItemCopyFound) is
-- shown merged (domain.MergeHappenings). event_item_listings holds the
-- other listings of each item; the merged listing is a row of
-- calendar_events of its own (domain.MergedHappeningID), rendered like
-- any happening, and view_id names it: the row an item's renderings,
-- search and occurrences come from. NULL: the item's own happening.
ALTER TABLE event_items ADD COLUMN IF NOT EXISTS view_id uuid;
--bun:split
CREATE TABLE IF NOT EXISTS event_item_listings (
    item_id  uuid        NOT NULL,
    feed_id  uuid        NOT NULL,
    event_id uuid        NOT NULL,
    found_at timestamptz NOT NULL,
    PRIMARY KEY (item_id, event_id)
);
--bun:split
CREATE INDEX IF NOT EXISTS event_item_listings_event_idx ON event_item_listings (event_id);
