ALTER TABLE webhook_routes DROP COLUMN IF EXISTS filter;
--bun:split
ALTER TABLE webhooks DROP COLUMN IF EXISTS filter;
