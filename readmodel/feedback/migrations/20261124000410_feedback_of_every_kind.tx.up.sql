-- One feedback read model for items of every feed kind: news feedback
-- names its article, event feedback its event. Existing rows are news
-- feedback, which is what a rebuild from the log gives them too.
ALTER TABLE news_item_feedback RENAME TO item_feedback;
--bun:split
ALTER INDEX news_item_feedback_pkey RENAME TO item_feedback_pkey;
--bun:split
ALTER INDEX news_item_feedback_item_idx RENAME TO item_feedback_item_idx;
--bun:split
ALTER TABLE item_feedback
    ADD COLUMN feed_kind text NOT NULL DEFAULT 'news',
    ADD COLUMN event_id  uuid,
    ALTER COLUMN news_page_id DROP NOT NULL;
