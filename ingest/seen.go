package ingest

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/ingest/connector"
)

const (
	// maxURLFailures is how many counted failures a candidate URL may have
	// when it fails permanently (a 404, too large, not HTML: see
	// failures.go) before the crawler stops trying it: such pages seldom
	// recover, and each retry costs a request to the site. It is also the
	// least number of polls a transiently failing URL is retried.
	maxURLFailures = 3
	// seenRetention is how long a seen URL is remembered. Dated candidates
	// older than the 14-day window are skipped anyway, but undated links
	// (index pages) may stay listed longer; one still listed after this is
	// fetched once more, which is harmless because article and item
	// appends are idempotent.
	seenRetention = "30 days"
)

// seenURLs returns which of urls this source has dealt with: fetched into
// an article and distributed, or given up on.
func (w *Worker) seenURLs(ctx context.Context, sourceID uuid.UUID, urls []string) (map[string]bool, error) {
	out := map[string]bool{}
	if len(urls) == 0 {
		return out, nil
	}
	var seen []string
	err := w.db.NewRaw(`SELECT url FROM crawl_seen WHERE source_id = ? AND url = ANY(?)
		AND (distributed_at IS NOT NULL OR article_id IS NULL)`, sourceID, pgdialect.Array(urls)).
		Scan(ctx, &seen)
	if err != nil {
		return nil, fmt.Errorf("read seen URLs of source %s: %w", sourceID, err)
	}
	for _, u := range seen {
		out[u] = true
	}
	return out, nil
}

// seenArticle is a candidate URL that became an article.
type seenArticle struct {
	url     string
	article domain.ArticleDiscovered
}

// markSeen records that candidate URLs became articles, with what the
// backfill needs to find them before the articles projection has them,
// in one statement. The rows stay pending (no distributed_at) until
// markDistributed.
func (w *Worker) markSeen(ctx context.Context, sourceID uuid.UUID, seen []seenArticle) error {
	// One row per URL: an upsert may not touch a row twice.
	idx := make(map[string]int, len(seen))
	var urls, ids []string
	var effective []time.Time
	for _, s := range seen {
		if i, dup := idx[s.url]; dup {
			ids[i], effective[i] = s.article.NewsPageID.String(), s.article.EffectiveAt
			continue
		}
		idx[s.url] = len(urls)
		urls = append(urls, s.url)
		ids = append(ids, s.article.NewsPageID.String())
		effective = append(effective, s.article.EffectiveAt)
	}
	_, err := w.db.NewRaw(`INSERT INTO crawl_seen (source_id, url, article_id, effective_at, seen_at)
		SELECT ?, s.url, s.article_id, s.effective_at, now()
		FROM unnest(?::text[], ?::uuid[], ?::timestamptz[]) AS s(url, article_id, effective_at)
		ON CONFLICT (source_id, url) DO UPDATE SET article_id = EXCLUDED.article_id, effective_at = EXCLUDED.effective_at`,
		sourceID, pgdialect.Array(urls), pgdialect.Array(ids), pgdialect.Array(effective)).Exec(ctx)
	if err != nil {
		return fmt.Errorf("record %d URLs as seen: %w", len(urls), err)
	}
	return nil
}

// distributedURL is a URL dealt with; heldNone says its document holds no
// event now.
type distributedURL struct {
	url      string
	heldNone bool
}

// markDistributed completes seen URLs: later polls skip them. The URLs
// succeeded, so their earlier failures no longer matter: they go in the
// same statement, one round trip for all. A URL whose document holds no
// event now lets go of whatever it held before in the same statement too
// (holders.go), so reading every document for events costs the
// article-only path no round trip.
func (w *Worker) markDistributed(ctx context.Context, sourceID uuid.UUID, done ...distributedURL) error {
	idx := make(map[string]int, len(done))
	var urls []string
	var heldNone []bool
	for _, d := range done {
		if i, dup := idx[d.url]; dup {
			heldNone[i] = d.heldNone
			continue
		}
		idx[d.url] = len(urls)
		urls = append(urls, d.url)
		heldNone = append(heldNone, d.heldNone)
	}
	// An upsert: a document that fed no article (one read only for its
	// events) has no row yet, and is dealt with all the same.
	_, err := w.db.NewRaw(`WITH d AS (SELECT * FROM unnest(?::text[], ?::bool[]) AS d(url, held_none)),
		cleared AS (DELETE FROM crawl_failures f USING d WHERE f.source_id = ? AND f.url = d.url),
		released AS (DELETE FROM ingest_event_holders h USING d WHERE d.held_none AND h.url = d.url)
		INSERT INTO crawl_seen (source_id, url, seen_at, distributed_at) SELECT ?, d.url, now(), now() FROM d
		ON CONFLICT (source_id, url) DO UPDATE SET distributed_at = now()`,
		pgdialect.Array(urls), pgdialect.Array(heldNone), sourceID, sourceID).Exec(ctx)
	if err != nil {
		return fmt.Errorf("record %d URLs as distributed: %w", len(urls), err)
	}
	return nil
}

// failingURLs returns which of urls have counted failures: pages known to
// fail on their own while their site answers, whose transient failures
// therefore do not vote on the site's health (see failures.go).
func (w *Worker) failingURLs(ctx context.Context, sourceID uuid.UUID, urls []string) (map[string]bool, error) {
	out := map[string]bool{}
	if len(urls) == 0 {
		return out, nil
	}
	var failing []string
	err := w.db.NewRaw(`SELECT url FROM crawl_failures WHERE source_id = ? AND url = ANY(?) AND failures > 0`,
		sourceID, pgdialect.Array(urls)).Scan(ctx, &failing)
	if err != nil {
		return nil, fmt.Errorf("read failing URLs of source %s: %w", sourceID, err)
	}
	for _, u := range failing {
		out[u] = true
	}
	return out, nil
}

// failedURLs returns which of urls have failed and wait for a retry,
// counted or not.
func (w *Worker) failedURLs(ctx context.Context, sourceID uuid.UUID, urls []string) (map[string]bool, error) {
	out := map[string]bool{}
	if len(urls) == 0 {
		return out, nil
	}
	var failed []string
	err := w.db.NewRaw(`SELECT url FROM crawl_failures WHERE source_id = ? AND url = ANY(?)`,
		sourceID, pgdialect.Array(urls)).Scan(ctx, &failed)
	if err != nil {
		return nil, fmt.Errorf("read failed URLs of source %s: %w", sourceID, err)
	}
	for _, u := range failed {
		out[u] = true
	}
	return out, nil
}

// transientLimit is how many counted failures a URL that fails transiently
// may reach before it is given up: GiveUpAfter in polls, because a URL that
// fails while its site answers is retried once per poll, and polls in which
// the site was down do not count. At the defaults (24h, 10m) that is 144
// requests over a day for a page that never recovers.
func (w *Worker) transientLimit() int {
	n := int((w.cfg.GiveUpAfter + w.cfg.PollInterval - 1) / w.cfg.PollInterval)
	return max(n, maxURLFailures)
}

// failedCandidates returns the candidates of this source that failed and
// are still to be retried, as their listings gave them, so that they are
// retried on the next poll even when every listing answers 304. Those given
// up are in crawl_seen too, where selectCandidates drops them.
func (w *Worker) failedCandidates(ctx context.Context, sourceID uuid.UUID) ([]connector.Candidate, error) {
	var rows []struct {
		URL       string `bun:"url"`
		Candidate []byte `bun:"candidate"`
	}
	err := w.db.NewRaw(`SELECT url, candidate FROM crawl_failures WHERE source_id = ? ORDER BY url`, sourceID).Scan(ctx, &rows)
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

// recordFailure records a failure of a candidate, counting it when counted,
// and returns the count. When a counted failure brings the count
// to limit, the URL is also recorded as seen (with no article), so later
// polls skip it, and gaveUp is true. An uncounted failure (the site was
// down) only updates the last error.
func (w *Worker) recordFailure(ctx context.Context, db bun.IDB, sourceID uuid.UUID, c connector.Candidate, cause error, counted bool, limit int) (n int, gaveUp bool, err error) {
	url := c.URL
	inc := 0
	if counted {
		inc = 1
	}
	cand, err := json.Marshal(c)
	if err != nil {
		return 0, false, fmt.Errorf("encode candidate %s: %w", url, err)
	}
	err = db.NewRaw(`INSERT INTO crawl_failures AS f (source_id, url, failures, last_error, last_failed_at, candidate)
		VALUES (?, ?, ?, ?, now(), ?)
		ON CONFLICT (source_id, url) DO UPDATE SET failures = f.failures + EXCLUDED.failures, last_error = EXCLUDED.last_error,
			last_failed_at = EXCLUDED.last_failed_at, candidate = EXCLUDED.candidate
		RETURNING failures`, sourceID, url, inc, truncate(errString(cause), 2000), string(cand)).Scan(ctx, &n)
	if err != nil {
		return 0, false, fmt.Errorf("record failure of %s: %w", url, err)
	}
	if !counted || n < limit {
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

// pruneSeen forgets URLs seen longer ago than seenRetention, and failures
// as old, so the tables stay proportional to what sites currently list.
func (w *Worker) pruneSeen(ctx context.Context, sourceID uuid.UUID) error {
	if _, err := w.db.NewRaw(`DELETE FROM crawl_seen WHERE source_id = ? AND seen_at < now() - ?::interval`,
		sourceID, seenRetention).Exec(ctx); err != nil {
		return fmt.Errorf("prune seen URLs of source %s: %w", sourceID, err)
	}
	if _, err := w.db.NewRaw(`DELETE FROM crawl_failures WHERE source_id = ? AND last_failed_at < now() - ?::interval`,
		sourceID, seenRetention).Exec(ctx); err != nil {
		return fmt.Errorf("prune failed URLs of source %s: %w", sourceID, err)
	}
	return nil
}
