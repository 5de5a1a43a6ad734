package ingest

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/feedsvc/feedsvc/crawl"
	"github.com/feedsvc/feedsvc/domain"
)

// crawledTypes are the source types this worker crawls; platform accounts
// need their own fetchers.
var crawledTypes = []string{string(domain.SourceSite), string(domain.SourceSitemap), string(domain.SourceSiteIndexPage)}

// lease is a source this process holds the crawl lease of, with the state
// the crawl needs.
type lease struct {
	SourceID uuid.UUID
	Failures int
	Site     cachedSite
}

// cachedSite is a site's discovery as stored in crawl_state.
type cachedSite struct {
	BaseURL      string
	Sitemaps     []string
	Feeds        []string
	DiscoveredAt time.Time
}

// leaseDue leases up to n due sources. A source is due when at least one
// attachment that crawls it has the source and the feed enabled, and it has
// no crawl_state yet or its next_at has passed and nobody holds a live
// lease. Sources never crawled come first, so a new attachment starts
// promptly even when many sources are overdue.
func (w *Worker) leaseDue(ctx context.Context, n int) ([]lease, error) {
	var ids []uuid.UUID
	err := w.db.NewRaw(`
		(SELECT a.source_id FROM ingest_attachments a
		  WHERE a.source_enabled AND a.feed_enabled AND a.source_type IN (?)
		    AND NOT EXISTS (SELECT 1 FROM crawl_state c WHERE c.source_id = a.source_id)
		  GROUP BY a.source_id LIMIT ?)
		UNION ALL
		(SELECT c.source_id FROM crawl_state c
		  WHERE c.next_at <= now() AND (c.leased_until IS NULL OR c.leased_until < now())
		    AND EXISTS (SELECT 1 FROM ingest_attachments a WHERE a.source_id = c.source_id
		                  AND a.source_enabled AND a.feed_enabled AND a.source_type IN (?))
		  ORDER BY c.next_at LIMIT ?)`,
		bun.In(crawledTypes), n, bun.In(crawledTypes), n).Scan(ctx, &ids)
	if err != nil {
		return nil, fmt.Errorf("find due sources: %w", err)
	}
	var out []lease
	for _, id := range ids {
		if len(out) == n {
			break
		}
		l, ok, err := w.acquire(ctx, id)
		if err != nil {
			return out, err
		}
		if ok {
			out = append(out, l)
		}
	}
	return out, nil
}

// acquire takes the crawl lease of a source in one statement. The insert
// covers a source never crawled; the conditional update covers the rest and
// succeeds only when the source is due and no lease is live, so of two
// processes racing for a source exactly one gets a row back (the loser's
// upsert waits for the winner's row and then fails its WHERE). Requiring
// next_at <= now() also stops a process that saw the source due just before
// another finished crawling it from crawling it again.
func (w *Worker) acquire(ctx context.Context, sourceID uuid.UUID) (lease, bool, error) {
	var row struct {
		Failures     int            `bun:"failures"`
		BaseURL      sql.NullString `bun:"site_base_url"`
		Sitemaps     []byte         `bun:"site_sitemaps"`
		Feeds        []byte         `bun:"site_feeds"`
		DiscoveredAt sql.NullTime   `bun:"site_discovered_at"`
	}
	err := w.db.NewRaw(`
		INSERT INTO crawl_state AS c (source_id, next_at, leased_until, lease_owner)
		VALUES (?, now(), now() + ? * interval '1 millisecond', ?)
		ON CONFLICT (source_id) DO UPDATE SET leased_until = EXCLUDED.leased_until, lease_owner = EXCLUDED.lease_owner
		WHERE c.next_at <= now() AND (c.leased_until IS NULL OR c.leased_until < now())
		RETURNING c.failures, c.site_base_url, c.site_sitemaps, c.site_feeds, c.site_discovered_at`,
		sourceID, millis(w.cfg.LeaseDuration), w.cfg.Owner).Scan(ctx, &row)
	if errors.Is(err, sql.ErrNoRows) {
		return lease{}, false, nil
	}
	if err != nil {
		return lease{}, false, fmt.Errorf("lease source %s: %w", sourceID, err)
	}
	l := lease{SourceID: sourceID, Failures: row.Failures}
	if row.BaseURL.Valid && row.DiscoveredAt.Valid {
		l.Site = cachedSite{BaseURL: row.BaseURL.String, DiscoveredAt: row.DiscoveredAt.Time}
		// A malformed cache is only a cache: leaving it empty rediscovers.
		_ = json.Unmarshal(row.Sitemaps, &l.Site.Sitemaps)
		_ = json.Unmarshal(row.Feeds, &l.Site.Feeds)
	}
	return l, true, nil
}

// renew extends a crawl lease this process holds; false means it was lost.
func (w *Worker) renew(ctx context.Context, sourceID uuid.UUID) (bool, error) {
	res, err := w.db.NewRaw(`UPDATE crawl_state SET leased_until = now() + ? * interval '1 millisecond'
		WHERE source_id = ? AND lease_owner = ?`, millis(w.cfg.LeaseDuration), sourceID, w.cfg.Owner).Exec(ctx)
	if err != nil {
		return false, fmt.Errorf("renew lease of source %s: %w", sourceID, err)
	}
	n, err := res.RowsAffected()
	return n > 0, err
}

// outcome is how a crawl ended, for the release.
type outcome int

const (
	succeeded outcome = iota
	failed
	// interrupted: the worker is stopping; the source stays due and its
	// failure count is untouched.
	interrupted
)

// release hands the lease back and schedules the next crawl: after a poll
// interval on success, after an exponential backoff on failure, at once
// when interrupted. It only touches the row while this process still owns
// the lease, so a process whose lease expired cannot overwrite the schedule
// of the one that took over.
//
// covered is the earliest date the crawl looked for (zero when it looked
// for nothing), recorded on success for makeDue.
func (w *Worker) release(ctx context.Context, l lease, how outcome, covered time.Time, crawlErr error) error {
	var q string
	var args []any
	switch how {
	case succeeded:
		var cov *time.Time
		if !covered.IsZero() {
			cov = &covered
		}
		q = `UPDATE crawl_state SET leased_until = NULL, lease_owner = NULL, failures = 0, last_error = '',
			next_at = now() + ? * interval '1 millisecond', last_crawl_at = now(), last_success_at = now(),
			covered_since = coalesce(?, covered_since)
			WHERE source_id = ? AND lease_owner = ?`
		args = []any{millis(w.nextPoll()), cov, l.SourceID, w.cfg.Owner}
	case failed:
		q = `UPDATE crawl_state SET leased_until = NULL, lease_owner = NULL, failures = failures + 1, last_error = ?,
			next_at = now() + ? * interval '1 millisecond', last_crawl_at = now()
			WHERE source_id = ? AND lease_owner = ?`
		args = []any{truncate(errString(crawlErr), 2000), millis(w.failureDelay(l.Failures+1, crawlErr)), l.SourceID, w.cfg.Owner}
	default:
		q = `UPDATE crawl_state SET leased_until = NULL, lease_owner = NULL WHERE source_id = ? AND lease_owner = ?`
		args = []any{l.SourceID, w.cfg.Owner}
	}
	if _, err := w.db.NewRaw(q, args...).Exec(ctx); err != nil {
		return fmt.Errorf("release lease of source %s: %w", l.SourceID, err)
	}
	return nil
}

// maxRetryAfter bounds how long a site's Retry-After can park a source.
const maxRetryAfter = 24 * time.Hour

// failureDelay is the backoff after a failed crawl, or longer when the site
// asked for it with Retry-After (on 429 and 503).
func (w *Worker) failureDelay(failures int, err error) time.Duration {
	d := w.retryDelay(failures)
	var se *crawl.StatusError
	if errors.As(err, &se) && se.RetryAfter > d {
		d = min(se.RetryAfter, maxRetryAfter)
	}
	return d
}

// saveSite caches a site's discovery while this process holds its lease.
func (w *Worker) saveSite(ctx context.Context, sourceID uuid.UUID, s cachedSite) error {
	sitemaps, err := json.Marshal(nonNil(s.Sitemaps))
	if err != nil {
		return fmt.Errorf("encode sitemaps: %w", err)
	}
	feeds, err := json.Marshal(nonNil(s.Feeds))
	if err != nil {
		return fmt.Errorf("encode feeds: %w", err)
	}
	_, err = w.db.NewRaw(`UPDATE crawl_state SET site_base_url = ?, site_sitemaps = ?, site_feeds = ?, site_discovered_at = ?
		WHERE source_id = ? AND lease_owner = ?`, s.BaseURL, string(sitemaps), string(feeds), s.DiscoveredAt, sourceID, w.cfg.Owner).Exec(ctx)
	if err != nil {
		return fmt.Errorf("cache discovery of source %s: %w", sourceID, err)
	}
	return nil
}

// forgetSite drops a site's cached discovery.
func (w *Worker) forgetSite(ctx context.Context, sourceID uuid.UUID) error {
	_, err := w.db.NewRaw(`UPDATE crawl_state SET site_discovered_at = NULL WHERE source_id = ? AND lease_owner = ?`,
		sourceID, w.cfg.Owner).Exec(ctx)
	if err != nil {
		return fmt.Errorf("drop cached discovery of source %s: %w", sourceID, err)
	}
	return nil
}

// makeDue moves a source's next crawl to now when a new attachment accepts
// articles from before what the last crawl looked for, so that its first
// crawl finds what the backfill could not know. When the last crawl already
// covered the attachment's window, every candidate in it was considered
// and the backfill has them, so the schedule stays as it is.
//
// A source that is backing off (failures > 0) keeps its schedule: its
// next_at is the backoff, maybe a Retry-After the site asked for, and the
// crawl it would bring forward is the very one that keeps failing. The
// attachment's older articles come with the first crawl that succeeds,
// which looks back as far as every accepting attachment.
func (w *Worker) makeDue(ctx context.Context, sourceID uuid.UUID, activeSince time.Time) error {
	_, err := w.db.NewRaw(`UPDATE crawl_state SET next_at = now()
		WHERE source_id = ? AND next_at > now() AND failures = 0
		  AND (covered_since IS NULL OR covered_since > ?)`, sourceID, activeSince).Exec(ctx)
	if err != nil {
		return fmt.Errorf("schedule source %s: %w", sourceID, err)
	}
	return nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// truncate bounds a stored error message; cutting mid-rune would be
// invalid UTF-8, which Postgres rejects, hence the repair.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "")
}
