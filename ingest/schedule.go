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
	attachments  []Attachment
	listings     []listingRow
	hasFailures  bool
	hasEventDocs bool
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
			&l.hasFailures, &l.hasEventDocs}, a.dest()...)...)
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

// release hands the lease back and schedules the next crawl: after a poll
// interval on success, at once when the crawl left a backlog (it hit
// MaxFetchesPerCrawl), after an exponential backoff on failure, at once
// when interrupted. The lease package only lets it touch the row while
// this process still owns the lease, so a process whose lease expired
// cannot overwrite the schedule of the one that took over.
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
			backlog: stats.Backlog, covered: stats.Covered, fresh: stats.Freshness, stopRenew: stopRenew})
		return nil
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

// pendingRelease is a successful crawl whose lease is still to be handed
// back (release).
type pendingRelease struct {
	id      uuid.UUID
	ended   time.Time
	note    string
	backlog bool
	covered time.Time
	fresh   time.Duration
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
	covered, fresh, ago := make([]*time.Time, n), make([]int64, n), make([]int64, n)
	now := time.Now()
	for i, r := range rs {
		ids[i], notes[i], backlogs[i] = r.id, r.note, r.backlog
		if !r.covered.IsZero() {
			covered[i] = &rs[i].covered
		}
		fresh[i] = r.fresh.Milliseconds()
		ago[i] = now.Sub(r.ended).Milliseconds()
		dueAgain = dueAgain || r.backlog
	}
	_, err := w.pool.Exec(ctx, w.releaseSQL, ids, notes, backlogs, covered, fresh, ago, w.cfg.Owner)
	if err != nil {
		w.log.Error("releasing sources failed", "sources", n, "err", err)
		return false
	}
	return dueAgain
}

// releaseSQL is flushReleases' statement: it hands back the leases of
// owner $7 on the sources $1 and schedules each one's next poll from its
// outcome ($2 to $6, see pendingRelease). New builds it once.
func (w *Worker) buildReleaseSQL() string {
	return `UPDATE crawl_state SET leased_until = NULL, lease_owner = NULL,
			failures = 0, last_error = v.note, backlog = v.backlog,
			last_crawl_at = now() - v.ago * interval '1 millisecond', last_success_at = now() - v.ago * interval '1 millisecond',
			covered_since = coalesce(v.covered, covered_since),
			freshness_ms = coalesce(nullif(v.fresh, 0), freshness_ms), ` +
		w.scheduleSQL("v.backlog", "v.fresh", "now() - v.ago * interval '1 millisecond'") + `
		FROM unnest($1::uuid[], $2::text[], $3::boolean[], $4::timestamptz[], $5::bigint[], $6::bigint[])
			AS v(id, note, backlog, covered, fresh, ago)
		WHERE crawl_state.source_id = v.id AND crawl_state.lease_owner = $7`
}

// week is what the observed interval is counted over, as Miniflux's
// entry-frequency scheduler does: a source that published n articles in
// the last week is polled every week/n.
const week = 7 * 24 * time.Hour

// scheduleSQL is the SET list that schedules a source's next poll after a
// successful crawl that ended at the SQL time ended: at once with a
// backlog (the SQL boolean backlog); else, with a fixed interval,
// PollInterval; else (adaptive) week/n for the n articles of the last week
// the source's crawls recorded (MaxPollInterval when none), raised to the
// freshness its listings claimed (the SQL milliseconds fresh, 0 for none;
// kept from an earlier poll when this one heard none, as a 304 carries no
// feed ttl), within [PollInterval, MaxPollInterval], or MaxPollInterval for
// a source with a live WebSub subscription (pushed sources are polled as
// the fallback); jittered by ±10%. It is one expression of the row, so the
// release stays one statement; the count reads the crawl_seen index
// (source_id, effective_at).
func (w *Worker) scheduleSQL(backlog, fresh, ended string) string {
	floor, ceiling := w.cfg.PollInterval.Milliseconds(), w.cfg.MaxPollInterval.Milliseconds()
	observed := "NULL"
	interval := fmt.Sprint(floor)
	if ceiling > floor {
		observed = fmt.Sprintf(`(SELECT %d / nullif(count(*), 0) FROM crawl_seen s
			WHERE s.source_id = crawl_state.source_id AND s.effective_at > now() - interval '7 days')`, week.Milliseconds())
		interval = fmt.Sprintf(`least(%d, greatest(%d, coalesce(%s, %d), coalesce(nullif(%s, 0), freshness_ms, 0)))`,
			ceiling, floor, observed, ceiling, fresh)
		// A source a WebSub hub pushes (ingest/websub) is polled only as
		// the fallback, at the ceiling, while its subscription is live.
		interval = fmt.Sprintf(`CASE WHEN EXISTS (SELECT 1 FROM websub_subscriptions p WHERE p.source_id = crawl_state.source_id
			AND p.state = 'active' AND p.lease_expires_at > now()) THEN %d ELSE %s END`, ceiling, interval)
	}
	next := fmt.Sprintf("CASE WHEN %s THEN 0 ELSE (%s) * (0.9 + random() * 0.2) END", backlog, interval)
	return fmt.Sprintf(`observed_interval_ms = %s, interval_ms = %s,
		next_at = %s + %s * interval '1 millisecond'`, observed, interval, ended, next)
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
