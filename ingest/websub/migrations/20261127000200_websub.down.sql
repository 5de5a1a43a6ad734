DROP TABLE IF EXISTS websub_pushes;
--bun:split
DROP TABLE IF EXISTS websub_subscriptions;
