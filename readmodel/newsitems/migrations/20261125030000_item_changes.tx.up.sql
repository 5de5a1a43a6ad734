-- Where each news and event item last changed: the global log position
-- (commit, prepare) of the last event that changed what the item lists
-- show, which the item-list cursor pages by. The projectors write it in
-- their batch transactions, in log order, and a rebuild writes the same
-- values, so it needs no sequence of its own.
--
-- Rows projected before it existed cannot know it: they get 0 here, and
-- the two projectors that own these tables are at version 2, so `feedsvc
-- serve` rebuilds their read models from the log in a shadow copy on its
-- first start, while these rows keep serving (README, "Changing a read
-- model").
ALTER TABLE news_items
    ADD COLUMN change_commit  bigint NOT NULL DEFAULT 0,
    ADD COLUMN change_prepare bigint NOT NULL DEFAULT 0;
--bun:split
CREATE INDEX IF NOT EXISTS news_items_feed_change_idx ON news_items (feed_id, change_commit, change_prepare, id);
--bun:split
ALTER TABLE event_items
    ADD COLUMN change_commit  bigint NOT NULL DEFAULT 0,
    ADD COLUMN change_prepare bigint NOT NULL DEFAULT 0;
--bun:split
CREATE INDEX IF NOT EXISTS event_items_feed_change_idx ON event_items (feed_id, change_commit, change_prepare, id);
