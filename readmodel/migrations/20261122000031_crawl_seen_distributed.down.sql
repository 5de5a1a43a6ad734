ALTER TABLE crawl_seen DROP COLUMN IF EXISTS distributed_at;
