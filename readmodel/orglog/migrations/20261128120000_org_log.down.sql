DROP TABLE IF EXISTS org_log_happening_items;
--bun:split
DROP TABLE IF EXISTS org_log_happenings;
--bun:split
DROP TABLE IF EXISTS org_log_webhooks;
--bun:split
DROP TABLE IF EXISTS org_log_feeds;
--bun:split
DROP TABLE IF EXISTS org_log;
