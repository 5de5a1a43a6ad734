-- Issue 22: a delivery's row is written twice, queued (pending) and then
-- its attempt's outcome. With full pages the second write could not stay
-- on the row's page, so it also inserted into the table's four indexes;
-- half of each page left free lets it be a heap-only update (the status and
-- updated_at are in no index). Applies to pages written from now on.
ALTER TABLE webhook_deliveries SET (fillfactor = 50);
