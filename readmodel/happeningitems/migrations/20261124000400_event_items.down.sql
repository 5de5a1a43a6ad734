DROP TABLE IF EXISTS event_detached_attachments;
--bun:split
DROP TABLE IF EXISTS event_feed_spans;
--bun:split
DROP TABLE IF EXISTS event_item_occurrences;
--bun:split
DROP TABLE IF EXISTS event_item_attachments;
--bun:split
DROP TABLE IF EXISTS event_items;
--bun:split
DROP TABLE IF EXISTS calendar_events;
--bun:split
DELETE FROM projection_checkpoints WHERE name = 'eventitems';
