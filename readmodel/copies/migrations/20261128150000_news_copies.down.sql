DROP TABLE IF EXISTS event_item_copies;
DROP TABLE IF EXISTS news_item_copies;
DROP TABLE IF EXISTS news_copy_bands;
DROP TABLE IF EXISTS news_copy_index;
