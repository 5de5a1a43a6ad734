package ingest

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/feedsvc/feedsvc/domain"

	"github.com/feedsvc/feedsvc/ingest/connector"
	"github.com/feedsvc/feedsvc/ingest/document"
	"github.com/feedsvc/feedsvc/internal/lease"
)

// leased is a source this process holds the crawl lease of, with what the
// crawl needs from its crawl_state and what the claim read beside it.
type leased struct {
	SourceID uuid.UUID
	Failures int
	// Backlog: the last crawl stopped at MaxFetchesPerCrawl, and this one
	// goes on with what it left.
	Backlog bool
	// State is what the source's connector kept (connector.Source.State).
	State json.RawMessage
	// What the claim read for the batch it leased (loadClaimed), so that
	// a poll that finds nothing new reads nothing more: the source's
	// attachments, its stored listing validators (whatever their window:
	// candidatesOf keeps those the crawl may use), and whether it has
	// failed candidates to retry or event documents to re-read.
	attachments      []Attachment
	listings         []listingRow
	hasFailures      bool
	hasHappeningDocs bool
}

// leaseDue leases up to n due sources. A source is due when at least one
// attachment that crawls it has the source and the feed enabled, a
// connector reads its type, and it has no crawl_state yet or its next_at
// has passed and nobody holds a live lease. Sources never crawled come
// first, so a new attachment starts promptly even when many sources are
// overdue; they are looked for only when withNew (when an attachment
// became crawlable, or at a tick while that is not being told, or for the
// full scan: see lookForNew), not after every crawl (newSources), and each
// is leased on its own (its crawl_state row is inserted by the claim).
//
// The scheduled ones are claimed, together with what their crawls read
// first (attachments, listing validators, whether failures or event
// documents wait), in one statement (claimScheduled): a poll whose
// listings answer 304 then costs no statement of its own, only its share
// of the batch's claim and release. When a step fails, the leases taken
// are handed back at once rather than held until they expire (or crawled
// without what the crawl needs).
func (w *Worker) leaseDue(ctx context.Context, n int, withNew bool) ([]leased, error) {
	var out []leased
	var err error
	if withNew {
		out, err = w.leaseNew(ctx, n)
	}
	if err == nil && len(out) < n {
		var claimed []leased
		claimed, err = w.claimScheduled(ctx, n-len(out))
		out = append(out, claimed...)
	}
	if err != nil {
		// Never-crawled sources found but not crawled are looked for
		// again at the next tick (lookForNew).
		w.newLook.failed = w.newLook.failed || withNew
		rctx, cancel := lease.ReleaseContext()
		defer cancel()
		for _, l := range out {
			if rerr := w.crawls.Release(rctx, l.SourceID, ""); rerr != nil {
				w.log.Warn("handing back a lease failed", "source_id", l.SourceID, "err", rerr)
			}
		}
		return nil, err
	}
	return out, nil
}

// leaseNew leases up to n never-crawled sources, one claim each (the
// claim inserts their crawl_state rows), and reads what their crawls read
// first in one statement. On error it returns the sources it leased, for
// the caller to hand back.
func (w *Worker) leaseNew(ctx context.Context, n int) ([]leased, error) {
	ids, err := w.newSources(ctx, n)
	if err != nil || len(ids) == 0 {
		return nil, err
	}
	held := ids[:0]
	for _, id := range ids {
		ok, err := w.crawls.Claim(ctx, id, "")
		if err != nil {
			return leasedIDs(held), err
		}
		if ok {
			held = append(held, id)
		}
	}
	if len(held) == 0 {
		return nil, nil
	}
	rows, err := w.pool.Query(ctx, loadLeasedSQL, held, w.cfg.Owner)
	if err != nil {
		return leasedIDs(held), fmt.Errorf("read new sources' crawl state: %w", err)
	}
	out, err := scanLeased(rows)
	if err != nil {
		return leasedIDs(held), fmt.Errorf("read new sources' crawl state: %w", err)
	}
	return out, nil
}

func leasedIDs(ids []uuid.UUID) []leased {
	out := make([]leased, len(ids))
	for i, id := range ids {
		out[i].SourceID = id
	}
	return out
}

const (
	// newSourcesFullScan is how often the look for never-crawled sources
	// reads every attachment rather than those changed since the last
	// look, and newSourcesSlack how far before the last look it reads:
	// together they bound how late a source is found whose attachment was
	// projected long after its event (a projector catching up).
	newSourcesFullScan = time.Minute
	newSourcesSlack    = time.Minute
)

// newSources returns up to n sources that are crawlable and have never
// been scheduled. It reads the attachments that became crawlable since
// shortly before its last look (the index on the latest of their attach
// and re-enable times), and every attachment on its first look and once
// per newSourcesFullScan: at 10,000 sources the whole-table look costs
// Postgres more than the polls of a tick. Only the schedule loop calls it.
func (w *Worker) newSources(ctx context.Context, n int) ([]uuid.UUID, error) {
	start := time.Now()
	full := w.newLook.full.IsZero() || start.Sub(w.newLook.full) >= newSourcesFullScan
	// Two fixed texts, whole and incremental, so that each is prepared
	// once (see claimSQL).
	changed, args := "", []any{w.connectors.SourceTypes(), n}
	if !full {
		changed, args = "AND greatest(a.attached_at, a.source_enabled_at, a.feed_enabled_at) > $3", append(args, w.newLook.last.Add(-newSourcesSlack))
	}
	rows, err := w.pool.Query(ctx, `SELECT a.source_id FROM ingest_attachments a
		  WHERE a.source_enabled AND a.feed_enabled AND a.source_type = ANY($1::text[]) `+changed+`
		    AND NOT EXISTS (SELECT 1 FROM crawl_state c WHERE c.source_id = a.source_id)
		  GROUP BY a.source_id LIMIT $2`, args...)
	var ids []uuid.UUID
	if err == nil {
		ids, err = pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
	}
	w.newLook.failed = err != nil
	if err != nil {
		return nil, fmt.Errorf("find new sources: %w", err)
	}
	// With as many as asked for, more may wait: the next look reads from
	// the same point again, and comes before the next tick (lookForNew).
	w.newLook.more = len(ids) == n
	if len(ids) < n {
		w.newLook.last = start
		if full {
			w.newLook.full = start
		}
	}
	return ids, nil
}

// The statements the worker runs often (the claim below and the release
// in flushReleases every tick; newSources, and pendingBackfills in the
// backfill loop, when told of new attachments and at least once a minute)
// go through pgx directly with bound arguments, as the event store's do, not through bun: bun inlines its arguments, so no two
// texts repeat, and pgx's statement cache then prepares, describes and
// later deallocates each one (three round trips, the text parsed twice).
// With fixed texts pgx prepares each once per connection and every later
// tick is one round trip that Postgres neither parses nor describes. The
// rest of the package stays on bun: it runs per changed poll or per
// source, where that cost is shared by real work.

// leasedColumns reads, for each crawl_state row c leased to this process,
// what its crawl reads first: one row per attachment (the listing
// validators and flags repeated on each), ordered by source, a source
// without attachment rows (detached since it was found due) on one row of
// NULLs so that its lease is never lost track of. scanLeased reads it.
const leasedColumns = `c.source_id, c.failures, c.backlog, c.connector_state,
	  l.urls, l.etags, l.last_modified, l.covered,
	  EXISTS (SELECT 1 FROM crawl_failures f WHERE f.source_id = c.source_id),
	  EXISTS (SELECT 1 FROM ingest_event_documents e WHERE e.source_id = c.source_id),
	  ` + attachmentColumns + `
	FROM %s c
	CROSS JOIN LATERAL (SELECT array_agg(url) AS urls, array_agg(etag) AS etags, array_agg(last_modified) AS last_modified,
	    array_agg(covered_since) AS covered FROM crawl_listings WHERE source_id = c.source_id) l
	LEFT JOIN ingest_attachments a ON a.source_id = c.source_id
	ORDER BY c.source_id, a.attached_at`

// claimSQL leases up to $2 scheduled due sources of the types $1 for $3
// milliseconds to owner $4, and reads what their crawls read first
// (claimScheduled).
var claimSQL = `WITH due AS (
	  SELECT c.source_id FROM crawl_state c
	   CROSS JOIN LATERAL (SELECT 1 FROM ingest_attachments a WHERE a.source_id = c.source_id
	                   AND a.source_enabled AND a.feed_enabled AND a.source_type = ANY($1::text[]) LIMIT 1) crawlable
	   WHERE c.next_at <= now() AND (c.leased_until IS NULL OR c.leased_until < now())
	   ORDER BY c.next_at LIMIT $2 FOR UPDATE OF c SKIP LOCKED),
	claimed AS (UPDATE crawl_state t SET leased_until = now() + $3 * interval '1 millisecond', lease_owner = $4
	  FROM due WHERE t.source_id = due.source_id
	  RETURNING t.source_id, t.failures, t.backlog, t.connector_state)
	SELECT ` + fmt.Sprintf(leasedColumns, "claimed")

// loadLeasedSQL reads what the crawls of the sources $1, leased to owner
// $2, read first.
var loadLeasedSQL = `SELECT ` + fmt.Sprintf(leasedColumns,
	"(SELECT * FROM crawl_state WHERE source_id = ANY($1::uuid[]) AND lease_owner = $2)")

// claimScheduled leases up to n scheduled due sources in one statement,
// oldest due first, and reads what their crawls read first in the same
// one. Its semantics are lease.Claim's: a row is taken only when it is due
// (next_at <= now()) and nobody holds a live lease, and of processes
// racing for it one wins: FOR UPDATE SKIP LOCKED passes over rows another
// claim is taking, and a row another claim took since this statement's
// snapshot is re-read when locked (READ COMMITTED) and fails the WHERE
// then. The due rows are read from the next_at index, and each one's
// attachments by source: the LIMIT 1 keeps the planner from turning the
// check into a join of every attachment, which it chose on tables without
// statistics (200 ms a claim at 10,000 sources, against 0.4 ms). On error
// it returns what it claimed, for the caller to hand back.
func (w *Worker) claimScheduled(ctx context.Context, n int) ([]leased, error) {
	rows, err := w.pool.Query(ctx, claimSQL, w.connectors.SourceTypes(), n, w.cfg.LeaseDuration.Milliseconds(), w.cfg.Owner)
	if err != nil {
		return nil, fmt.Errorf("claim due sources: %w", err)
	}
	out, err := scanLeased(rows)
	if err != nil {
		return out, fmt.Errorf("claim due sources: %w", err)
	}
	return out, nil
}

// listingRow is a stored listing validator (crawl_listings).
type listingRow struct {
	SourceID     uuid.UUID
	URL          string
	ETag         string
	LastModified string
	CoveredSince time.Time
}

// scanLeased reads the rows of leasedColumns. On error it returns the
// sources read so far.
func scanLeased(rows pgx.Rows) ([]leased, error) {
	defer rows.Close()
	var out []leased
	for rows.Next() {
		var (
			l                     leased
			state                 []byte
			urls, etags, lastMods []string
			covered               []time.Time
			a                     nullAttachment
		)
		err := rows.Scan(append([]any{&l.SourceID, &l.Failures, &l.Backlog, &state, &urls, &etags, &lastMods, &covered,
			&l.hasFailures, &l.hasHappeningDocs}, a.dest()...)...)
		if err != nil {
			return out, err
		}
		if n := len(out); n > 0 && out[n-1].SourceID == l.SourceID {
			// Another attachment of the source before.
			out[n-1].attachments = append(out[n-1].attachments, a.attachment())
			continue
		}
		if len(state) > 0 {
			l.State = state
		}
		if len(urls) != len(etags) || len(urls) != len(lastMods) || len(urls) != len(covered) {
			return out, fmt.Errorf("source %s: listing validator arrays of unequal lengths", l.SourceID)
		}
		for i := range urls {
			l.listings = append(l.listings, listingRow{SourceID: l.SourceID, URL: urls[i], ETag: etags[i],
				LastModified: lastMods[i], CoveredSince: covered[i]})
		}
		if a.AttachmentID != nil {
			l.attachments = append(l.attachments, a.attachment())
		}
		out = append(out, l)
	}
	return out, rows.Err()
}

// nullAttachment is an Attachment read through a LEFT JOIN, NULL when
// the source has none.
type nullAttachment struct {
	AttachmentID, FeedID, OrganizationID, SourceID *uuid.UUID
	FeedKind                                       *domain.FeedKind
	SourceType                                     *domain.SourceType
	Details                                        []byte
	SourceEnabled, FeedEnabled                     *bool
	AttachedAt, SourceEnabledAt, FeedEnabledAt     *time.Time
}

// dest is where Scan puts attachmentColumns.
func (a *nullAttachment) dest() []any {
	return []any{&a.AttachmentID, &a.FeedID, &a.FeedKind, &a.OrganizationID, &a.SourceID, &a.SourceType, &a.Details,
		&a.SourceEnabled, &a.FeedEnabled, &a.AttachedAt, &a.SourceEnabledAt, &a.FeedEnabledAt}
}

func (a *nullAttachment) attachment() Attachment {
	return Attachment{
		AttachmentID: *a.AttachmentID, FeedID: *a.FeedID, FeedKind: *a.FeedKind, OrganizationID: *a.OrganizationID,
		SourceID: *a.SourceID, SourceType: *a.SourceType, Details: a.Details, SourceEnabled: *a.SourceEnabled,
		FeedEnabled: *a.FeedEnabled, AttachedAt: *a.AttachedAt, SourceEnabledAt: a.SourceEnabledAt, FeedEnabledAt: a.FeedEnabledAt,
	}
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

// release hands the lease back and schedules the next crawl: after the
// source's interval on success (scheduleSQL), at once when the crawl left a
// backlog (it hit MaxFetchesPerCrawl), after an exponential backoff or the
// site's Retry-After on failure (failureDelay), at once when interrupted.
// The lease package only lets it touch the row while this process still
// owns the lease, so a process whose lease expired cannot overwrite the
// schedule of the one that took over.
//
// A success is not written here but queued (releases), and the schedule
// loop writes the queue in one statement (flushReleases) at its next turn:
// most polls change nothing else, and one statement per batch instead of
// one per poll is most of what an unchanged poll costs Postgres. The row
// stays leased meanwhile, so nobody polls it again before it is written,
// and the time the crawl ended is what its schedule counts from; its
// renewal (stopRenew) goes on until the queue is written.
func (w *Worker) release(ctx context.Context, l leased, how outcome, stats *crawlStats, crawlErr error, stopRenew func()) error {
	var err error
	switch how {
	case succeeded:
		w.releases.add(pendingRelease{id: l.SourceID, ended: time.Now(), note: stats.cutOffNote(),
			backlog: stats.Backlog, covered: stats.Covered, fresh: stats.Fresh, throttle: stats.Throttle, stopRenew: stopRenew})
		return nil
	case failed:
		delay, reason := w.failureDelay(l.Failures+1, crawlErr)
		err = w.crawls.Release(ctx, l.SourceID, `failures = failures + 1, last_error = ?, backlog = false,
			next_at = now() + ? * interval '1 millisecond', last_crawl_at = now(), interval_ms = ?, interval_reason = ?`,
			truncate(errString(crawlErr), 2000), delay.Milliseconds(), delay.Milliseconds(), reason)
	default:
		err = w.crawls.Release(ctx, l.SourceID, "")
	}
	if err != nil {
		return fmt.Errorf("source %s: %w", l.SourceID, err)
	}
	return nil
}

// pendingRelease is a successful crawl whose lease is still to be handed
// back (release).
type pendingRelease struct {
	id      uuid.UUID
	ended   time.Time
	note    string
	backlog bool
	covered time.Time
	// fresh and throttle are what the listings said about when to read
	// them again (crawlStats).
	fresh, throttle document.Hint
	// stopRenew ends the renewal of the lease, which goes on until the
	// release is written (crawlLeased); nil when nothing renews it.
	stopRenew func()
}

// releaseQueue holds the successful crawls not yet written.
type releaseQueue struct {
	mu      sync.Mutex
	pending []pendingRelease
	// urgent: one of them left a backlog and is due again at once.
	urgent bool
}

func (q *releaseQueue) add(r pendingRelease) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.pending = append(q.pending, r)
	q.urgent = q.urgent || r.backlog
}

func (q *releaseQueue) state() (n int, urgent bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.pending), q.urgent
}

// has reports whether the crawl of source id waits in the queue.
func (q *releaseQueue) has(id uuid.UUID) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, r := range q.pending {
		if r.id == id {
			return true
		}
	}
	return false
}

func (q *releaseQueue) take() []pendingRelease {
	q.mu.Lock()
	defer q.mu.Unlock()
	out := q.pending
	q.pending, q.urgent = nil, false
	return out
}

// flushReleases writes every queued success in one statement: each row,
// while this process still owns its lease, is handed back with its
// outcome and its next poll scheduled from when its crawl ended (now()
// minus how long ago that was, so that the schedule is counted on the
// database's clock, as every lease is). It reports whether one of them is
// due again at once (a backlog). A failed write is logged: the leases then
// expire, and the sources are polled again after LeaseDuration, as after a
// crash.
func (w *Worker) flushReleases(ctx context.Context) (dueAgain bool) {
	rs := w.releases.take()
	if len(rs) == 0 {
		return false
	}
	// The renewals stop first, so that none runs after the write and
	// finds the lease gone; the last renewal left at least two thirds of
	// the lease to run, far more than the write takes.
	for _, r := range rs {
		if r.stopRenew != nil {
			r.stopRenew()
		}
	}
	n := len(rs)
	ids, notes, backlogs := make([]uuid.UUID, n), make([]string, n), make([]bool, n)
	covered, ago := make([]*time.Time, n), make([]int64, n)
	fresh, freshBy, throttle, throttleBy := make([]int64, n), make([]string, n), make([]int64, n), make([]string, n)
	now := time.Now()
	for i, r := range rs {
		ids[i], notes[i], backlogs[i] = r.id, r.note, r.backlog
		if !r.covered.IsZero() {
			covered[i] = &rs[i].covered
		}
		fresh[i], freshBy[i] = r.fresh.For.Milliseconds(), r.fresh.By
		throttle[i], throttleBy[i] = r.throttle.For.Milliseconds(), r.throttle.By
		ago[i] = now.Sub(r.ended).Milliseconds()
		dueAgain = dueAgain || r.backlog
	}
	_, err := w.pool.Exec(ctx, w.releaseSQL, ids, notes, backlogs, covered, fresh, freshBy, throttle, throttleBy, ago, w.cfg.Owner)
	if err != nil {
		w.log.Error("releasing sources failed", "sources", n, "err", err)
		return false
	}
	return dueAgain
}

// releaseSQL is flushReleases' statement: it hands back the leases of
// owner $10 on the sources $1 and schedules each one's next poll from its
// outcome ($2 to $9, see pendingRelease). New builds it once.
func (w *Worker) buildReleaseSQL() string {
	ended := "now() - v.ago * interval '1 millisecond'"
	return `UPDATE crawl_state SET leased_until = NULL, lease_owner = NULL,
			failures = 0, last_error = v.note, backlog = v.backlog,
			last_crawl_at = ` + ended + `, last_success_at = ` + ended + `,
			covered_since = coalesce(v.covered, covered_since),
			freshness_ms = CASE WHEN v.fresh > 0 THEN v.fresh ELSE freshness_ms END,
			freshness_reason = CASE WHEN v.fresh > 0 THEN v.fresh_by ELSE freshness_reason END,
			watched_since = coalesce(watched_since, CASE WHEN NOT v.backlog THEN ` + ended + ` END),
			` + w.scheduleSQL(ended) + `
		FROM unnest($1::uuid[], $2::text[], $3::boolean[], $4::timestamptz[], $5::bigint[], $6::text[], $7::bigint[], $8::text[], $9::bigint[])
			AS v(id, note, backlog, covered, fresh, fresh_by, throttle, throttle_by, ago)
		WHERE crawl_state.source_id = v.id AND crawl_state.lease_owner = $10`
}

// The polling promise (docs/operating.md, "How often a source is
// checked"): every enabled source is checked at least once per
// PollInterval, whatever it published. Only these move a successful
// poll's next one:
//
//   - The source is busy: it is checked sooner, about pollsPerArticle
//     times per article it publishes (its observed interval, the mean gap
//     between its recent articles, divided by pollsPerArticle), down to
//     MinPollInterval. Each article then costs about pollsPerArticle polls
//     that find nothing (a conditional GET answered 304, the cheapest
//     poll there is) and waits for half its interval on average: a source
//     publishing every 20 minutes is checked every 2, one publishing every
//     10 minutes or more often every MinPollInterval (1m by default). A
//     source that publishes less often than every PollInterval x
//     pollsPerArticle is checked every PollInterval. With MaxPollInterval
//     above PollInterval (the operator trading freshness for cost) the
//     same rule lengthens a quiet source's interval up to it.
//   - The site asks for less: its listings' freshness (Cache-Control
//     max-age, Expires, RSS <ttl>, sy:updatePeriod), honoured up to
//     maxCacheHint, and its throttles (Retry-After, robots.txt
//     Crawl-delay), honoured up to maxRetryAfter.
//   - A WebSub hub pushes the source: pushes bring its new entries within
//     about a second, and polling is the fallback, at MaxPollInterval (the
//     interval itself unless the operator set it above).
//
// A failed poll backs off instead (failureDelay), and a poll cut short by
// MaxFetchesPerCrawl goes on at once.
const (
	// DefaultMinPollInterval is the shortest interval of a busy source:
	// with it the busiest sources' articles wait about 30 s on average and
	// a minute at most, well within the two minutes the service aims at
	// for the busiest tenth of sources at the default 10-minute interval.
	DefaultMinPollInterval = time.Minute
	// pollsPerArticle is how many polls a busy source gets per article it
	// publishes.
	pollsPerArticle = 20
	// recentArticles is how many of a source's newest articles (of the
	// last week) its observed interval is counted over: enough to judge a
	// source as soon as it is attached (a feed lists 10 to 50 entries),
	// few enough to follow a change of pace within a day, and a bounded
	// read of the crawl_seen index whatever the source publishes.
	recentArticles = 20
	// maxCacheHint bounds how far a site's freshness claims lengthen its
	// interval: past an hour a feed's ttl or max-age is more often a
	// default of its software than a promise about its next article.
	maxCacheHint = time.Hour
	// maxRetryAfter bounds how long a site's throttle (Retry-After on any
	// answer, robots.txt Crawl-delay) can park a source.
	maxRetryAfter = 24 * time.Hour
	// week is how far back the observed interval looks.
	week = 7 * 24 * time.Hour
)

// Why a source's next poll is when it is (crawl_state.interval_reason,
// the polling block's intervalReason), besides the site's own hints
// (document.By*).
const (
	reasonInterval = "interval"
	reasonBusy     = "busy"
	reasonQuiet    = "quiet"
	reasonPush     = "push"
	reasonBacklog  = "backlog"
	reasonBackoff  = "backoff"
)

// siteReasons are the reasons that are the site's own request, which
// bringWithinInterval leaves as they are.
var siteReasons = []string{document.ByCacheControl, document.ByExpires, document.ByFeedTTL, document.ByFeedUpdatePeriod,
	document.ByRetryAfter, document.ByCrawlDelay}

// scheduleSQL is the multiple-column SET item that schedules a source's
// next poll after a successful crawl that ended at the SQL time ended (see
// the rule above): its observed interval, the interval (before jitter), why
// it is what it is, and the next poll, at once with a backlog, else after
// the interval jittered downwards by up to 10% so that sources attached
// together spread out without any waiting past the promise. It reads the
// release's row v (backlog, fresh, fresh_by, throttle, throttle_by; a
// freshness heard on an earlier poll is kept when this one heard none, as a
// 304 carries no feed ttl). It is one sub-select of the row, run once per
// row, so the release stays one statement; the observed interval reads at
// most recentArticles entries of the crawl_seen index (source_id,
// effective_at), and the push check the websub_subscriptions source index,
// each once: the OFFSET 0 keeps the planner from pulling the two up into
// every expression that uses them (six copies of each, measured).
func (w *Worker) scheduleSQL(ended string) string {
	poll, least, most := w.cfg.PollInterval.Milliseconds(), w.cfg.MinPollInterval.Milliseconds(), w.cfg.MaxPollInterval.Milliseconds()
	// The observed interval: over the source's newest recentArticles of
	// the last week, the time from the oldest of them to now over the gaps
	// after it (a week for a single article). Articles whose date is when
	// the crawler first found them are left out when that was before its
	// first complete crawl ended (an index page of undated links would
	// otherwise look as if it had published them all at once); dated ones
	// from before the crawler began (scheduled_at) count. Future dates do
	// not. With a fixed interval it is not read at all.
	observed := "NULL::bigint"
	if least < most {
		observed = fmt.Sprintf(`(SELECT CASE count(*) WHEN 0 THEN NULL WHEN 1 THEN %d
				ELSE (extract(epoch FROM now() - min(r.e)) * 1000)::bigint / (count(*) - 1) END
			FROM (SELECT seen.effective_at AS e FROM crawl_seen seen
				WHERE seen.source_id = v.id AND seen.effective_at > now() - interval '7 days' AND seen.effective_at <= now()
				  AND NOT (seen.effective_at >= crawl_state.scheduled_at AND seen.effective_at <= coalesce(crawl_state.watched_since, 'infinity'))
				ORDER BY seen.effective_at DESC LIMIT %d) r)`, week.Milliseconds(), recentArticles)
	}
	return fmt.Sprintf(`(observed_interval_ms, interval_ms, interval_reason, next_at) = (
		SELECT o.observed, s.interval, s.reason,
			%[1]s + CASE WHEN v.backlog THEN 0 ELSE s.interval * (0.9 + random() * 0.1) END * interval '1 millisecond'
		FROM (SELECT %[2]s AS observed,
				EXISTS (SELECT 1 FROM websub_subscriptions p WHERE p.source_id = v.id
					AND p.state = 'active' AND p.lease_expires_at > now()) AS pushed
			OFFSET 0) o
		CROSS JOIN LATERAL (SELECT
				CASE WHEN o.pushed THEN %[5]d ELSE least(%[5]d, greatest(%[4]d, coalesce(o.observed / %[6]d, %[5]d))) END AS adaptive,
				least(coalesce(nullif(v.fresh, 0), crawl_state.freshness_ms, 0), %[7]d) AS cache,
				least(v.throttle, %[8]d) AS throttle) a
		CROSS JOIN LATERAL (SELECT greatest(a.adaptive, a.cache, a.throttle) AS interval,
				CASE WHEN v.backlog THEN '%[9]s'
					WHEN a.throttle > a.adaptive AND a.throttle >= a.cache THEN v.throttle_by
					WHEN a.cache > a.adaptive THEN CASE WHEN v.fresh > 0 THEN v.fresh_by ELSE crawl_state.freshness_reason END
					WHEN o.pushed THEN '%[10]s'
					WHEN a.adaptive < %[3]d THEN '%[11]s'
					WHEN a.adaptive > %[3]d THEN '%[12]s'
					ELSE '%[13]s' END AS reason) s)`,
		ended, observed, poll, least, most, pollsPerArticle, maxCacheHint.Milliseconds(), maxRetryAfter.Milliseconds(),
		reasonBacklog, reasonPush, reasonBusy, reasonQuiet, reasonInterval)
}

// failureDelay is the backoff after a failed crawl, or longer when the
// source asked for it (a site's Retry-After on 429 and 503, up to
// maxRetryAfter), and which of the two it is.
func (w *Worker) failureDelay(failures int, err error) (time.Duration, string) {
	d := w.retryDelay(failures)
	if after := connector.JudgementOf(err).RetryAfter; after > d {
		return min(after, maxRetryAfter), document.ByRetryAfter
	}
	return d, reasonBackoff
}

// bringWithinInterval keeps the promise for sources an earlier version, or
// a longer interval, scheduled further ahead than it allows: each source
// due later than MaxPollInterval from now (the interval itself unless the
// operator set it above) is made due at a random moment within it, so that
// they come back spread over one interval rather than all at once. Sources
// held there by their site's own request (a throttle or freshness, each
// bounded when it was written), backing off after failures, or leased are
// left as they are. The crawler runs it as it starts: it changes nothing
// when every source is within the interval (one range read of the next_at
// index), and several processes starting together do not pile up: one
// that finds a row another is moving waits for that to commit and reads
// the row again, which is then within the interval (or, by the
// milliseconds between their starts, moved again within it).
func (w *Worker) bringWithinInterval(ctx context.Context) (int64, error) {
	tag, err := w.pool.Exec(ctx, `UPDATE crawl_state SET next_at = now() + random() * $1 * interval '1 millisecond'
		WHERE next_at > now() + $1 * interval '1 millisecond' AND failures = 0
		  AND (leased_until IS NULL OR leased_until < now())
		  AND (interval_reason IS NULL OR interval_reason <> ALL($2::text[]))`,
		w.cfg.MaxPollInterval.Milliseconds(), siteReasons)
	if err != nil {
		return 0, fmt.Errorf("bring sources within the poll interval: %w", err)
	}
	return tag.RowsAffected(), nil
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
