-- A webhook's filter (issue 37): a query in the syntax of domain/search
-- that an item's event must match to be delivered; empty for every item.
ALTER TABLE webhooks ADD COLUMN IF NOT EXISTS filter text NOT NULL DEFAULT '';
--bun:split
ALTER TABLE webhook_routes ADD COLUMN IF NOT EXISTS filter text NOT NULL DEFAULT '';
