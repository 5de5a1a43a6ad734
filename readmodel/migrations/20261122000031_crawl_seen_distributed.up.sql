-- distributed_at is set once a seen URL's article was offered to every feed
-- of the source; a row without it (the process died in between) is
-- processed again on the next poll. Rows written before this column were
-- deleted when distribution failed, so the ones left count as distributed.
ALTER TABLE crawl_seen ADD COLUMN IF NOT EXISTS distributed_at timestamptz;
--bun:split
UPDATE crawl_seen SET distributed_at = seen_at WHERE distributed_at IS NULL AND article_id IS NOT NULL;
