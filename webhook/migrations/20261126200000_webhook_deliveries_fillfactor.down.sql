ALTER TABLE webhook_deliveries RESET (fillfactor);
