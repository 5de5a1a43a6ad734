-- A news feed's keyword rules (domain.FeedRules, issue 37); NULL when it
-- has none.
ALTER TABLE feeds ADD COLUMN IF NOT EXISTS rules jsonb;
