DROP TABLE IF EXISTS feed_subscriptions;
