-- An article's near-copy signature (domain/nearcopy), as its discovery
-- carries it: a backfill offers an article from this table, and without
-- its signature the copy check could compare it by address alone. Null
-- until the projector's version 2 has rebuilt the table from the log, and
-- for articles too short to compare.
ALTER TABLE articles ADD COLUMN IF NOT EXISTS signature text;
