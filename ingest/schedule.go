package ingest

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/feedsvc/feedsvc/ingest/connector"
)

// leased is a source this process holds the crawl lease of, with what the
// crawl needs from its crawl_state.
type leased struct {
	SourceID uuid.UUID
	Failures int
	// Backlog: the last crawl stopped at MaxFetchesPerCrawl, and this one
	// goes on with what it left.
	Backlog bool
	// State is what the source's connector kept (connector.Source.State).
	State json.RawMessage
}

// leaseDue leases up to n due sources. A source is due when at least one
// attachment that crawls it has the source and the feed enabled, a
// connector reads its type, and it has no crawl_state yet or its next_at
// has passed and nobody holds a live lease. Sources never crawled come
// first, so a new attachment starts promptly even when many sources are
// overdue; looking for them reads every attachment, so it is done only
// when withNew (each tick, a second apart), not after every crawl. The
// scheduled ones are found from the next_at index: only the rows already
// due are read, however many sources there are (the fence, OFFSET 0,
// keeps the planner from joining every attachment first).
func (w *Worker) leaseDue(ctx context.Context, n int, withNew bool) ([]leased, error) {
	types := bun.In(w.connectors.SourceTypes())
	var ids []uuid.UUID
	newOnes := 0
	if withNew {
		newOnes = n
	}
	err := w.db.NewRaw(`
		(SELECT a.source_id FROM ingest_attachments a
		  WHERE ? > 0 AND a.source_enabled AND a.feed_enabled AND a.source_type IN (?)
		    AND NOT EXISTS (SELECT 1 FROM crawl_state c WHERE c.source_id = a.source_id)
		  GROUP BY a.source_id LIMIT ?)
		UNION ALL
		(SELECT c.source_id FROM (SELECT source_id, next_at FROM crawl_state
		    WHERE next_at <= now() AND (leased_until IS NULL OR leased_until < now()) OFFSET 0) c
		  WHERE EXISTS (SELECT 1 FROM ingest_attachments a WHERE a.source_id = c.source_id
		                  AND a.source_enabled AND a.feed_enabled AND a.source_type IN (?))
		  ORDER BY c.next_at LIMIT ?)`,
		newOnes, types, newOnes, types, n).Scan(ctx, &ids)
	if err != nil {
		return nil, fmt.Errorf("find due sources: %w", err)
	}
	var out []leased
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

// acquire takes the crawl lease of a source. Requiring next_at <= now()
// (the table's Claimable) stops a process that saw the source due just
// before another finished crawling it from crawling it again.
func (w *Worker) acquire(ctx context.Context, sourceID uuid.UUID) (leased, bool, error) {
	l := leased{SourceID: sourceID}
	var state []byte
	ok, err := w.crawls.Claim(ctx, sourceID, "t.failures, t.backlog, t.connector_state", &l.Failures, &l.Backlog, &state)
	if err != nil || !ok {
		return leased{}, false, err
	}
	if len(state) > 0 {
		l.State = state
	}
	return l, true, nil
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
// interval on success, at once when the crawl left a backlog (it hit
// MaxFetchesPerCrawl), after an exponential backoff on failure, at once
// when interrupted. The lease package only lets it touch the row while
// this process still owns the lease, so a process whose lease expired
// cannot overwrite the schedule of the one that took over.
//
// covered is the earliest date the crawl looked for (zero when it looked
// for nothing), recorded on success for makeDue.
func (w *Worker) release(ctx context.Context, l leased, how outcome, stats *crawlStats, crawlErr error) error {
	var err error
	switch how {
	case succeeded:
		var cov *time.Time
		if !stats.Covered.IsZero() {
			cov = &stats.Covered
		}
		var fresh *int64
		if stats.Freshness > 0 {
			ms := stats.Freshness.Milliseconds()
			fresh = &ms
		}
		// A document cut short by a bound is no failure of the source, but
		// its reason is kept where failures are.
		err = w.crawls.Release(ctx, l.SourceID, `failures = 0, last_error = ?, backlog = ?,
			last_crawl_at = now(), last_success_at = now(), covered_since = coalesce(?, covered_since),
			freshness_ms = coalesce(?, freshness_ms), `+w.scheduleSQL(stats.Backlog, stats.Freshness),
			stats.cutOffNote(), stats.Backlog, cov, fresh)
	case failed:
		err = w.crawls.Release(ctx, l.SourceID, `failures = failures + 1, last_error = ?, backlog = false,
			next_at = now() + ? * interval '1 millisecond', last_crawl_at = now()`,
			truncate(errString(crawlErr), 2000), w.failureDelay(l.Failures+1, crawlErr).Milliseconds())
	default:
		err = w.crawls.Release(ctx, l.SourceID, "")
	}
	if err != nil {
		return fmt.Errorf("source %s: %w", l.SourceID, err)
	}
	return nil
}

// week is what the observed interval is counted over, as Miniflux's
// entry-frequency scheduler does: a source that published n articles in
// the last week is polled every week/n.
const week = 7 * 24 * time.Hour

// scheduleSQL is the SET list that schedules a source's next poll after a
// successful crawl: at once with a backlog; else, with a fixed interval,
// PollInterval; else (adaptive) week/n for the n articles of the last week
// the source's crawls recorded (MaxPollInterval when none), raised to the
// freshness its listings claimed (kept from an earlier poll when this one
// heard none, as a 304 carries no feed ttl), within [PollInterval,
// MaxPollInterval], or MaxPollInterval for a source with a live WebSub
// subscription (pushed sources are polled as the fallback); jittered by
// ±10%. It is one expression of the row, so
// the release stays one statement; the count reads the crawl_seen index
// (source_id, effective_at).
func (w *Worker) scheduleSQL(backlog bool, fresh time.Duration) string {
	floor, ceiling := w.cfg.PollInterval.Milliseconds(), w.cfg.MaxPollInterval.Milliseconds()
	observed := "NULL"
	interval := fmt.Sprint(floor)
	if ceiling > floor {
		observed = fmt.Sprintf(`(SELECT %d / nullif(count(*), 0) FROM crawl_seen s
			WHERE s.source_id = crawl_state.source_id AND s.effective_at > now() - interval '7 days')`, week.Milliseconds())
		interval = fmt.Sprintf(`least(%d, greatest(%d, coalesce(%s, %d), coalesce(nullif(%d, 0), freshness_ms, 0)))`,
			ceiling, floor, observed, ceiling, fresh.Milliseconds())
		// A source a WebSub hub pushes (ingest/websub) is polled only as
		// the fallback, at the ceiling, while its subscription is live.
		interval = fmt.Sprintf(`CASE WHEN EXISTS (SELECT 1 FROM websub_subscriptions p WHERE p.source_id = crawl_state.source_id
			AND p.state = 'active' AND p.lease_expires_at > now()) THEN %d ELSE %s END`, ceiling, interval)
	}
	next := "(" + interval + ") * (0.9 + random() * 0.2)"
	if backlog {
		next = "0"
	}
	return fmt.Sprintf(`observed_interval_ms = %s, interval_ms = %s,
		next_at = now() + %s * interval '1 millisecond'`, observed, interval, next)
}

// maxRetryAfter bounds how long a site's Retry-After can park a source.
const maxRetryAfter = 24 * time.Hour

// failureDelay is the backoff after a failed crawl, or longer when the
// source asked for it (a site's Retry-After on 429 and 503).
func (w *Worker) failureDelay(failures int, err error) time.Duration {
	d := w.retryDelay(failures)
	if after := connector.JudgementOf(err).RetryAfter; after > d {
		d = min(after, maxRetryAfter)
	}
	return d
}

// saveState keeps what the source's connector wants kept, while this
// process holds its lease.
func (w *Worker) saveState(ctx context.Context, sourceID uuid.UUID, state json.RawMessage) error {
	if _, err := w.crawls.Update(ctx, sourceID, "connector_state = ?", string(state)); err != nil {
		return fmt.Errorf("keep connector state of source %s: %w", sourceID, err)
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
func (w *Worker) makeDue(ctx context.Context, sourceID uuid.UUID, acceptingSince time.Time) error {
	_, err := w.db.NewRaw(`UPDATE crawl_state SET next_at = now()
		WHERE source_id = ? AND next_at > now() AND failures = 0
		  AND (covered_since IS NULL OR covered_since > ?)`, sourceID, acceptingSince).Exec(ctx)
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
