DROP TABLE IF EXISTS webhook_delivered_through;
--bun:split
DROP TABLE IF EXISTS event_store;
