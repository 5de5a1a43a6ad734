-- Full-text search of event items (issue 37): an event's title,
-- description, venue, address and organizer, in the configuration
-- feedsvc_simple (made with the news items' search, 20261128100000):
-- accents folded, no stemming, as events carry no language. The title
-- weighs most when ranking by relevance, then the description.
--
-- No index: a list with q reads the feed's items in its date range from
-- the occurrence index as without q and tests each one's event by its key,
-- so the words of events of other feeds and other dates are never read.
ALTER TABLE calendar_events ADD COLUMN search tsvector GENERATED ALWAYS AS (
    setweight(to_tsvector('feedsvc_simple'::regconfig, coalesce(details->>'title', '')), 'A')
    || setweight(to_tsvector('feedsvc_simple'::regconfig, coalesce(details->>'description', '')), 'B')
    || setweight(to_tsvector('feedsvc_simple'::regconfig,
        coalesce(details#>>'{location,venue,name}', '') || ' ' || coalesce(details#>>'{location,venue,address}', '') || ' '
        || coalesce(details#>>'{location,displayAddress}', '') || ' ' || coalesce(details#>>'{organizer,name}', '')), 'C')
) STORED;
