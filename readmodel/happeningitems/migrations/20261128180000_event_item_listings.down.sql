DROP TABLE IF EXISTS event_item_listings;
--bun:split
ALTER TABLE event_items DROP COLUMN IF EXISTS view_id;
