-- Each event item's relevance to its feed's config (D9), scored by the
-- eventitems projector when the item, its event or the feed's config
-- changes, so that a list reads it from the item's row instead of decoding
-- every listed event's details per request (issue 22). NULL: the feed's
-- config has nothing to score by, and the item omits relevanceScore.
-- event_feed_configs is the projector's own copy of each event feed's
-- config, which it scores against. Both start empty: the projector's
-- version 3 rebuilds the read model from the log on start, while the old
-- rows serve.
ALTER TABLE event_items ADD COLUMN IF NOT EXISTS relevance_score double precision;
--bun:split
CREATE TABLE IF NOT EXISTS event_feed_configs (
    feed_id uuid PRIMARY KEY,
    config  jsonb NOT NULL
);
