DELETE FROM item_feedback WHERE feed_kind <> 'news';
--bun:split
ALTER TABLE item_feedback
    DROP COLUMN feed_kind,
    DROP COLUMN event_id,
    ALTER COLUMN news_page_id SET NOT NULL;
--bun:split
ALTER INDEX item_feedback_item_idx RENAME TO news_item_feedback_item_idx;
--bun:split
ALTER INDEX item_feedback_pkey RENAME TO news_item_feedback_pkey;
--bun:split
ALTER TABLE item_feedback RENAME TO news_item_feedback;
