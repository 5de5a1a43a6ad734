-- Where each news and event item last changed: the global log position
-- (commit, prepare) of the last event that changed what the item lists
-- show, which the item-list cursor pages by. The projectors write it in
-- their batch transactions, in log order, and a rebuild writes the same
-- values, so it needs no sequence of its own.
--
-- Rows projected before it existed cannot know it, so the two projectors
-- that own these tables start again from the beginning of the log: their
-- tables are emptied and their checkpoints reset here, and they refill
-- them when the service next starts (the replay a rebuild does, without
-- the shadow copy; lists are short of items until it catches up).
TRUNCATE news_items, news_feed_item_counts, calendar_events, event_items, event_item_attachments,
    event_item_occurrences, event_feed_spans, event_detached_attachments;
--bun:split
UPDATE projection_checkpoints SET commit_position = 0, prepare_position = 0, updated_at = now()
WHERE name IN ('newsitems', 'eventitems');
--bun:split
ALTER TABLE news_items
    ADD COLUMN change_commit  bigint NOT NULL,
    ADD COLUMN change_prepare bigint NOT NULL;
--bun:split
CREATE INDEX IF NOT EXISTS news_items_feed_change_idx ON news_items (feed_id, change_commit, change_prepare, id);
--bun:split
ALTER TABLE event_items
    ADD COLUMN change_commit  bigint NOT NULL,
    ADD COLUMN change_prepare bigint NOT NULL;
--bun:split
CREATE INDEX IF NOT EXISTS event_items_feed_change_idx ON event_items (feed_id, change_commit, change_prepare, id);
