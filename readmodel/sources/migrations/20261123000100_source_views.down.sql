ALTER TABLE news_items DROP COLUMN IF EXISTS source;
--bun:split
ALTER TABLE source_organizations DROP COLUMN IF EXISTS details;
