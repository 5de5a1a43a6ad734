ALTER TABLE calendar_events DROP COLUMN IF EXISTS search;
