-- Each organization sees a shared source record its own way (its siteId);
-- NULL for links stored before, which show the record's details. Items keep
-- their source block as the connector built it; NULL for items stored
-- before blocks were, which all came from websites.
ALTER TABLE source_organizations ADD COLUMN IF NOT EXISTS details jsonb;
--bun:split
ALTER TABLE news_items ADD COLUMN IF NOT EXISTS source jsonb;
