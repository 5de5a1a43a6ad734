-- Issue 40: a delivery's id is derived from its webhook and event
-- (webhook.DeliveryID), so the primary key already holds each pair once
-- and the dispatcher's insert now meets a repeat on it (ON CONFLICT (id)).
-- The pair's own unique index was a fourth index written for every
-- delivery and read by no query (the delivery log lists by
-- webhook_deliveries_webhook_created_idx, the prune by
-- webhook_deliveries_event_idx).
ALTER TABLE webhook_deliveries DROP CONSTRAINT IF EXISTS webhook_deliveries_webhook_id_event_id_key;
