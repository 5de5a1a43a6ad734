package crawlstate

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/feedsvc/feedsvc/ingest/connector"
)

// seenRetention is how long a seen URL is remembered. Dated candidates
// older than the 14-day window are skipped anyway, but undated links
// (index pages) may stay listed longer; one still listed after this is
// fetched once more, which is harmless because article and item appends
// are idempotent.
const seenRetention = "30 days"

// SeenURLs returns which of urls this source has dealt with: fetched into
// an article and distributed, or given up on.
func (s *Store) SeenURLs(ctx context.Context, sourceID uuid.UUID, urls []string) (map[string]bool, error) {
	return s.urlsOf(ctx, sourceID, urls, `SELECT url FROM crawl_seen WHERE source_id = ? AND url = ANY(?)
		AND (distributed_at IS NOT NULL OR article_id IS NULL)`, "seen")
}

// FailingURLs returns which of urls have counted failures.
func (s *Store) FailingURLs(ctx context.Context, sourceID uuid.UUID, urls []string) (map[string]bool, error) {
	return s.urlsOf(ctx, sourceID, urls, `SELECT url FROM crawl_failures WHERE source_id = ? AND url = ANY(?) AND failures > 0`, "failing")
}

// FailedURLs returns which of urls have failed and wait for a retry,
// counted or not.
func (s *Store) FailedURLs(ctx context.Context, sourceID uuid.UUID, urls []string) (map[string]bool, error) {
	return s.urlsOf(ctx, sourceID, urls, `SELECT url FROM crawl_failures WHERE source_id = ? AND url = ANY(?)`, "failed")
}

// urlsOf runs query, which selects the urls among ? (the second argument)
// of the source ? (the first), and returns them as a set.
func (s *Store) urlsOf(ctx context.Context, sourceID uuid.UUID, urls []string, query, what string) (map[string]bool, error) {
	out := map[string]bool{}
	if len(urls) == 0 {
		return out, nil
	}
	var found []string
	if err := s.db.NewRaw(query, sourceID, pgdialect.Array(urls)).Scan(ctx, &found); err != nil {
		return nil, fmt.Errorf("read %s URLs of source %s: %w", what, sourceID, err)
	}
	for _, u := range found {
		out[u] = true
	}
	return out, nil
}

// SeenArticle is a candidate URL that became an article.
type SeenArticle struct {
	URL         string
	ArticleID   uuid.UUID
	EffectiveAt time.Time
}

// MarkSeen records that candidate URLs became articles, with what the
// backfill needs to find them before the articles projection has them,
// in one statement. The rows stay pending (no distributed_at) until
// MarkDistributed.
func (s *Store) MarkSeen(ctx context.Context, sourceID uuid.UUID, seen []SeenArticle) error {
	// One row per URL: an upsert may not touch a row twice.
	idx := make(map[string]int, len(seen))
	var urls, ids []string
	var effective []time.Time
	for _, a := range seen {
		if i, dup := idx[a.URL]; dup {
			ids[i], effective[i] = a.ArticleID.String(), a.EffectiveAt
			continue
		}
		idx[a.URL] = len(urls)
		urls = append(urls, a.URL)
		ids = append(ids, a.ArticleID.String())
		effective = append(effective, a.EffectiveAt)
	}
	_, err := s.db.NewRaw(`INSERT INTO crawl_seen (source_id, url, article_id, effective_at, seen_at)
		SELECT ?, s.url, s.article_id, s.effective_at, now()
		FROM unnest(?::text[], ?::uuid[], ?::timestamptz[]) AS s(url, article_id, effective_at)
		ON CONFLICT (source_id, url) DO UPDATE SET article_id = EXCLUDED.article_id, effective_at = EXCLUDED.effective_at`,
		sourceID, pgdialect.Array(urls), pgdialect.Array(ids), pgdialect.Array(effective)).Exec(ctx)
	if err != nil {
		return fmt.Errorf("record %d URLs as seen: %w", len(urls), err)
	}
	return nil
}

// DistributedURL is a URL dealt with; HeldNone says its document holds no
// happening now.
type DistributedURL struct {
	URL      string
	HeldNone bool
}

// MarkDistributed completes seen URLs: later polls skip them. Their
// earlier failures go in the same statement, and so do the happenings a
// URL whose document holds none now held before (ingest_event_holders,
// with distrustHolders): one round trip for all.
func (s *Store) MarkDistributed(ctx context.Context, sourceID uuid.UUID, done ...DistributedURL) error {
	idx := make(map[string]int, len(done))
	var urls []string
	var heldNone []bool
	for _, d := range done {
		if i, dup := idx[d.URL]; dup {
			heldNone[i] = d.HeldNone
			continue
		}
		idx[d.URL] = len(urls)
		urls = append(urls, d.URL)
		heldNone = append(heldNone, d.HeldNone)
	}
	// An upsert: a document that fed no article (one read only for its
	// events) has no row yet, and is dealt with all the same.
	_, err := s.db.NewRaw(`WITH d AS (SELECT * FROM unnest(?::text[], ?::bool[]) AS d(url, held_none)),
		cleared AS (DELETE FROM crawl_failures f USING d WHERE f.source_id = ? AND f.url = d.url),
		released AS (DELETE FROM ingest_event_holders h USING d WHERE d.held_none AND h.url = d.url RETURNING h.event_id),
		distrusted AS (`+distrustHolders+` RETURNING 1)
		INSERT INTO crawl_seen (source_id, url, seen_at, distributed_at) SELECT ?, d.url, now(), now() FROM d
		ON CONFLICT (source_id, url) DO UPDATE SET distributed_at = now()`,
		pgdialect.Array(urls), pgdialect.Array(heldNone), sourceID, sourceID).Exec(ctx)
	if err != nil {
		return fmt.Errorf("record %d URLs as distributed: %w", len(urls), err)
	}
	return nil
}

// FailedCandidates returns the candidates of this source that failed and
// are still to be retried, as their listings gave them. Those given up
// are in crawl_seen too.
func (s *Store) FailedCandidates(ctx context.Context, sourceID uuid.UUID) ([]connector.Candidate, error) {
	var rows []struct {
		URL       string `bun:"url"`
		Candidate []byte `bun:"candidate"`
	}
	err := s.db.NewRaw(`SELECT url, candidate FROM crawl_failures WHERE source_id = ? ORDER BY url`, sourceID).Scan(ctx, &rows)
	if err != nil {
		return nil, fmt.Errorf("read failed URLs of source %s: %w", sourceID, err)
	}
	out := make([]connector.Candidate, 0, len(rows))
	for _, r := range rows {
		var c connector.Candidate
		// Without what the listing said the URL is still retried, undated.
		_ = json.Unmarshal(r.Candidate, &c)
		c.URL = r.URL
		out = append(out, c)
	}
	return out, nil
}

// Failure is a failure of a candidate to record: counted or not, and the
// count of counted failures at which the URL is given up.
type Failure struct {
	Candidate connector.Candidate
	Cause     error
	Counted   bool
	Limit     int
}

// Recorded is how a failure was recorded: the URL's count of counted
// failures, and whether the URL was given up.
type Recorded struct {
	Failures int
	GaveUp   bool
}

// RecordFailures records failures of the source's candidates in one short
// transaction, so that they become visible together: no reader sees one
// URL's count of a crawl without the others'.
func (s *Store) RecordFailures(ctx context.Context, sourceID uuid.UUID, failures []Failure) ([]Recorded, error) {
	out := make([]Recorded, len(failures))
	err := s.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		for i, f := range failures {
			n, gaveUp, err := recordFailure(ctx, tx, sourceID, f)
			if err != nil {
				return err
			}
			out[i] = Recorded{Failures: n, GaveUp: gaveUp}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// recordFailure records a failure of a candidate, counting it when counted,
// and returns the count. When a counted failure brings the count to its
// limit, the URL is also recorded as seen (with no article), so later
// polls skip it, and gaveUp is true. An uncounted failure (the site was
// down) only updates the last error.
func recordFailure(ctx context.Context, db bun.IDB, sourceID uuid.UUID, f Failure) (n int, gaveUp bool, err error) {
	url := f.Candidate.URL
	inc := 0
	if f.Counted {
		inc = 1
	}
	cand, err := json.Marshal(f.Candidate)
	if err != nil {
		return 0, false, fmt.Errorf("encode candidate %s: %w", url, err)
	}
	err = db.NewRaw(`INSERT INTO crawl_failures AS f (source_id, url, failures, last_error, last_failed_at, candidate)
		VALUES (?, ?, ?, ?, now(), ?)
		ON CONFLICT (source_id, url) DO UPDATE SET failures = f.failures + EXCLUDED.failures, last_error = EXCLUDED.last_error,
			last_failed_at = EXCLUDED.last_failed_at, candidate = EXCLUDED.candidate
		RETURNING failures`, sourceID, url, inc, Truncate(errString(f.Cause), 2000), string(cand)).Scan(ctx, &n)
	if err != nil {
		return 0, false, fmt.Errorf("record failure of %s: %w", url, err)
	}
	if !f.Counted || n < f.Limit {
		return n, false, nil
	}
	// A pending row (an article recorded but not distributed before a
	// crash, whose page now fails) is closed too, so it stops costing a
	// request per poll.
	_, err = db.NewRaw(`INSERT INTO crawl_seen AS s (source_id, url, seen_at) VALUES (?, ?, now())
		ON CONFLICT (source_id, url) DO UPDATE SET distributed_at = coalesce(s.distributed_at, now())`, sourceID, url).Exec(ctx)
	if err != nil {
		return n, false, fmt.Errorf("give up on %s: %w", url, err)
	}
	return n, true, nil
}

// PruneSeen forgets URLs seen longer ago than seenRetention, and failures
// as old, so the tables stay proportional to what sites currently list.
func (s *Store) PruneSeen(ctx context.Context, sourceID uuid.UUID) error {
	if _, err := s.db.NewRaw(`DELETE FROM crawl_seen WHERE source_id = ? AND seen_at < now() - ?::interval`,
		sourceID, seenRetention).Exec(ctx); err != nil {
		return fmt.Errorf("prune seen URLs of source %s: %w", sourceID, err)
	}
	if _, err := s.db.NewRaw(`DELETE FROM crawl_failures WHERE source_id = ? AND last_failed_at < now() - ?::interval`,
		sourceID, seenRetention).Exec(ctx); err != nil {
		return fmt.Errorf("prune failed URLs of source %s: %w", sourceID, err)
	}
	return nil
}

// SeenArticles returns the articles the source found (its URLs that
// became articles) taking effect at since or later: what a backfill
// offers before the articles projection may have them.
func (s *Store) SeenArticles(ctx context.Context, sourceID uuid.UUID, since time.Time) ([]uuid.UUID, error) {
	var seen []uuid.UUID
	err := s.db.NewRaw(`SELECT DISTINCT article_id FROM crawl_seen
		WHERE source_id = ? AND article_id IS NOT NULL AND effective_at >= ?`, sourceID, since).Scan(ctx, &seen)
	if err != nil {
		return nil, fmt.Errorf("read seen articles of source %s: %w", sourceID, err)
	}
	return seen, nil
}
