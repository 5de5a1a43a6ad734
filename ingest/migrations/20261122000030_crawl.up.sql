-- Crawler state. These tables are operational, not projections: nothing
-- rebuilds them from events, and losing them only costs refetching, since
-- article and item appends are idempotent.

-- One row per source record the crawler has scheduled: when it is due, who
-- holds the lease to crawl it, how it failed, and the cached discovery of a
-- site (its base URL, sitemaps and feeds) so that robots.txt and the home
-- page are not re-read on every poll. covered_since is the earliest date the
-- last successful crawl looked for, so that a new attachment reaching
-- further back can ask for a crawl at once.
CREATE TABLE IF NOT EXISTS crawl_state (
    source_id          uuid PRIMARY KEY,
    next_at            timestamptz NOT NULL DEFAULT now(),
    leased_until       timestamptz,
    lease_owner        text,
    failures           integer     NOT NULL DEFAULT 0,
    last_error         text        NOT NULL DEFAULT '',
    last_crawl_at      timestamptz,
    last_success_at    timestamptz,
    covered_since      timestamptz,
    site_base_url      text,
    site_sitemaps      jsonb,
    site_feeds         jsonb,
    site_discovered_at timestamptz
);
--bun:split
CREATE INDEX IF NOT EXISTS crawl_state_next_idx ON crawl_state (next_at);
--bun:split
-- Candidate URLs a source has dealt with, so each is fetched once per
-- source. article_id is null when the crawler gave up on the URL after
-- repeated failures. effective_at lets the backfill find what a source
-- found without waiting for the articles projection. distributed_at is set
-- once the URL's article was offered to every feed of the source; a row
-- with an article but without it (the process died in between) is
-- processed again on the next poll.
CREATE TABLE IF NOT EXISTS crawl_seen (
    source_id      uuid        NOT NULL,
    url            text        NOT NULL,
    article_id     uuid,
    effective_at   timestamptz,
    seen_at        timestamptz NOT NULL DEFAULT now(),
    distributed_at timestamptz,
    PRIMARY KEY (source_id, url)
);
--bun:split
CREATE INDEX IF NOT EXISTS crawl_seen_recent_idx ON crawl_seen (source_id, effective_at);
--bun:split
-- Candidate URLs that failed and will be retried on the next poll, until
-- they have failed often enough to be given up (then also in crawl_seen).
-- candidate is what the listing said about the URL (crawl.Candidate as
-- JSON), so that it is retried as listed even when the listing answers 304.
CREATE TABLE IF NOT EXISTS crawl_failures (
    source_id      uuid        NOT NULL,
    url            text        NOT NULL,
    failures       integer     NOT NULL DEFAULT 0,
    last_error     text        NOT NULL DEFAULT '',
    last_failed_at timestamptz NOT NULL DEFAULT now(),
    candidate      jsonb,
    PRIMARY KEY (source_id, url)
);
--bun:split
-- The HTTP validators (ETag, Last-Modified) of each listing a source's
-- crawls read (sitemaps, a sitemap index's children, feeds, index pages),
-- for conditional GETs. A row is written only by a crawl that dealt with
-- every candidate of the listing, so a 304 means there is nothing new in
-- it. covered_since is the start of that crawl's date window: a crawl
-- looking further back ignores the row, since the listing may name older
-- articles it skipped.
CREATE TABLE IF NOT EXISTS crawl_listings (
    source_id     uuid        NOT NULL,
    url           text        NOT NULL,
    etag          text        NOT NULL DEFAULT '',
    last_modified text        NOT NULL DEFAULT '',
    covered_since timestamptz NOT NULL,
    PRIMARY KEY (source_id, url)
);
--bun:split
-- The 14-day backfill of each attachment: leased like a crawl so that one
-- process runs it, done once done_at is set.
CREATE TABLE IF NOT EXISTS ingest_backfills (
    attachment_id uuid PRIMARY KEY,
    done_at       timestamptz,
    items         integer     NOT NULL DEFAULT 0,
    leased_until  timestamptz,
    lease_owner   text
);
