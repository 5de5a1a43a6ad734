-- The copies read model (readmodel/copies): what finds the item of a news
-- feed an article is a copy of, and each item's copies. Created empty; the
-- copies projector fills them from the whole log on its first run.

-- One row per article a feed holds, as an item (item_news_page_id is its
-- own id) or as a copy of one: its normal address and its MinHash
-- signature; news_copy_bands holds the signature's bands, hashed with the
-- feed (nearcopy.Bands), one row each.
CREATE TABLE IF NOT EXISTS news_copy_index (
    feed_id           uuid        NOT NULL,
    news_page_id      uuid        NOT NULL,
    item_news_page_id uuid        NOT NULL,
    address           text        NOT NULL,
    title             text        NOT NULL,
    signature         text        NOT NULL DEFAULT '',
    effective_at      timestamptz NOT NULL,
    PRIMARY KEY (feed_id, news_page_id)
);
CREATE TABLE IF NOT EXISTS news_copy_bands (
    band         bigint NOT NULL,
    feed_id      uuid   NOT NULL,
    news_page_id uuid   NOT NULL,
    PRIMARY KEY (band, feed_id, news_page_id)
);
CREATE INDEX IF NOT EXISTS news_copy_index_address ON news_copy_index (feed_id, address);

-- The copies of each item, in the order they were found.
CREATE TABLE IF NOT EXISTS news_item_copies (
    item_id         uuid        NOT NULL,
    feed_id         uuid        NOT NULL,
    organization_id uuid        NOT NULL,
    news_page_id    uuid        NOT NULL,
    attachment_id   uuid        NOT NULL,
    source_id       uuid        NOT NULL,
    source_type     text        NOT NULL,
    url             text        NOT NULL,
    title           text        NOT NULL,
    decided_by      text        NOT NULL,
    similarity      float8      NOT NULL,
    found_at        timestamptz NOT NULL,
    PRIMARY KEY (item_id, news_page_id)
);

-- The happenings each event item holds as other sources list them.
CREATE TABLE IF NOT EXISTS event_item_copies (
    item_id         uuid        NOT NULL,
    feed_id         uuid        NOT NULL,
    organization_id uuid        NOT NULL,
    copy_event_id   uuid        NOT NULL,
    attachment_id   uuid        NOT NULL,
    source_id       uuid        NOT NULL,
    source_type     text        NOT NULL,
    url             text        NOT NULL,
    title           text        NOT NULL,
    found_at        timestamptz NOT NULL,
    PRIMARY KEY (item_id, copy_event_id)
);
