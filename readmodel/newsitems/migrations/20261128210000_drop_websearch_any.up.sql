-- feedsvc_websearch_any served the first search of issue 37, which read a
-- query in every configuration at once; the lists read it in each item's
-- own language since (feedsvc_websearch_exact), and nothing calls it.
DROP FUNCTION IF EXISTS feedsvc_websearch_any(text);
