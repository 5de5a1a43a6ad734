-- A platform post's own ids (the post's and its account's), which only
-- the legacy news item shape shows (api.md 2.5). NULL for web pages.
ALTER TABLE news_items ADD COLUMN IF NOT EXISTS platform jsonb;
