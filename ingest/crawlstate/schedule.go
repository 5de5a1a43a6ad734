package crawlstate

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/uptrace/bun"

	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/ingest/attachments"
	"github.com/feedsvc/feedsvc/ingest/document"
)

// The statements the worker runs often (the claim below and the release
// in FlushReleases every tick; NewSources, and PendingBackfills in the
// backfill loop, when told of new attachments and at least once a minute)
// go through pgx directly with bound arguments, as the event store's do, not through bun: bun inlines its arguments, so no two
// texts repeat, and pgx's statement cache then prepares, describes and
// later deallocates each one (three round trips, the text parsed twice).
// With fixed texts pgx prepares each once per connection and every later
// tick is one round trip that Postgres neither parses nor describes. The
// rest of the store stays on bun: it runs per changed poll or per
// source, where that cost is shared by real work.

// Leased is a source this process holds the crawl lease of, with what the
// crawl needs from its crawl_state and what the claim read beside it.
type Leased struct {
	SourceID uuid.UUID
	Failures int
	// Backlog: the last crawl stopped at MaxFetchesPerCrawl, and this one
	// goes on with what it left.
	Backlog bool
	// State is what the source's connector kept (connector.Source.State).
	State json.RawMessage
	// What the claim read for the batch it leased, so that a poll that
	// finds nothing new reads nothing more: the source's attachments, its
	// stored listing validators (whatever their window: the crawl keeps
	// those it may use), and whether it has failed candidates to retry or
	// happening documents to re-read.
	Attachments      []attachments.Attachment
	Listings         []Listing
	HasFailures      bool
	HasHappeningDocs bool
}

// NewSources returns up to n sources of the types that are crawlable and
// have never been scheduled: of the attachments that became crawlable
// after changedSince (attached or re-enabled; the index on the latest of
// those times), or of every attachment when changedSince is zero.
func (s *Store) NewSources(ctx context.Context, types []string, n int, changedSince time.Time) ([]uuid.UUID, error) {
	// Two fixed texts, whole and incremental, so that each is prepared
	// once (see claimSQL).
	changed, args := "", []any{types, n}
	if !changedSince.IsZero() {
		changed, args = "AND greatest(a.attached_at, a.source_enabled_at, a.feed_enabled_at) > $3", append(args, changedSince)
	}
	rows, err := s.pool.Query(ctx, `SELECT a.source_id FROM ingest_attachments a
		  WHERE a.source_enabled AND a.feed_enabled AND a.source_type = ANY($1::text[]) `+changed+`
		    AND NOT EXISTS (SELECT 1 FROM crawl_state c WHERE c.source_id = a.source_id)
		  GROUP BY a.source_id LIMIT $2`, args...)
	var ids []uuid.UUID
	if err == nil {
		ids, err = pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
	}
	if err != nil {
		return nil, fmt.Errorf("find new sources: %w", err)
	}
	return ids, nil
}

// leasedColumns reads, for each crawl_state row c leased to this process,
// what its crawl reads first: one row per attachment (the listing
// validators and flags repeated on each), ordered by source, a source
// without attachment rows (detached since it was found due) on one row of
// NULLs so that its lease is never lost track of. scanLeased reads it.
const leasedColumns = `c.source_id, c.failures, c.backlog, c.connector_state,
	  l.urls, l.etags, l.last_modified, l.covered,
	  EXISTS (SELECT 1 FROM crawl_failures f WHERE f.source_id = c.source_id),
	  EXISTS (SELECT 1 FROM ingest_event_documents e WHERE e.source_id = c.source_id),
	  ` + attachments.Columns + `
	FROM %s c
	CROSS JOIN LATERAL (SELECT array_agg(url) AS urls, array_agg(etag) AS etags, array_agg(last_modified) AS last_modified,
	    array_agg(covered_since) AS covered FROM crawl_listings WHERE source_id = c.source_id) l
	LEFT JOIN ingest_attachments a ON a.source_id = c.source_id
	ORDER BY c.source_id, a.attached_at`

// claimSQL leases up to $2 scheduled due sources of the types $1 for $3
// milliseconds to owner $4, and reads what their crawls read first
// (ClaimScheduled).
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

// ClaimScheduled leases up to n scheduled due sources of the types in one
// statement, oldest due first, and reads what their crawls read first in
// the same one. Its semantics are lease.Claim's: a row is taken only when
// it is due (next_at <= now()) and nobody holds a live lease, and of
// processes racing for it one wins: FOR UPDATE SKIP LOCKED passes over
// rows another claim is taking, and a row another claim took since this
// statement's snapshot is re-read when locked (READ COMMITTED) and fails
// the WHERE then. The due rows are read from the next_at index, and each
// one's attachments by source: the LIMIT 1 keeps the planner from turning
// the check into a join of every attachment, which it chose on tables
// without statistics (200 ms a claim at 10,000 sources, against 0.4 ms).
// On error it returns what it claimed, for the caller to hand back.
func (s *Store) ClaimScheduled(ctx context.Context, types []string, n int) ([]Leased, error) {
	rows, err := s.pool.Query(ctx, claimSQL, types, n, s.lease.Milliseconds(), s.owner)
	if err != nil {
		return nil, fmt.Errorf("claim due sources: %w", err)
	}
	out, err := scanLeased(rows)
	if err != nil {
		return out, fmt.Errorf("claim due sources: %w", err)
	}
	return out, nil
}

// LoadLeased reads what the crawls of the sources ids, leased to this
// process (Crawls.Claim), read first, in one statement.
func (s *Store) LoadLeased(ctx context.Context, ids []uuid.UUID) ([]Leased, error) {
	rows, err := s.pool.Query(ctx, loadLeasedSQL, ids, s.owner)
	if err != nil {
		return nil, fmt.Errorf("read leased sources' crawl state: %w", err)
	}
	out, err := scanLeased(rows)
	if err != nil {
		return nil, fmt.Errorf("read leased sources' crawl state: %w", err)
	}
	return out, nil
}

// Listing is a stored listing validator (crawl_listings).
type Listing struct {
	SourceID     uuid.UUID
	URL          string
	ETag         string
	LastModified string
	CoveredSince time.Time
}

// scanLeased reads the rows of leasedColumns. On error it returns the
// sources read so far.
func scanLeased(rows pgx.Rows) ([]Leased, error) {
	defer rows.Close()
	var out []Leased
	for rows.Next() {
		var (
			l                     Leased
			state                 []byte
			urls, etags, lastMods []string
			covered               []time.Time
			a                     nullAttachment
		)
		err := rows.Scan(append([]any{&l.SourceID, &l.Failures, &l.Backlog, &state, &urls, &etags, &lastMods, &covered,
			&l.HasFailures, &l.HasHappeningDocs}, a.dest()...)...)
		if err != nil {
			return out, err
		}
		if n := len(out); n > 0 && out[n-1].SourceID == l.SourceID {
			// Another attachment of the source before.
			out[n-1].Attachments = append(out[n-1].Attachments, a.attachment())
			continue
		}
		if len(state) > 0 {
			l.State = state
		}
		if len(urls) != len(etags) || len(urls) != len(lastMods) || len(urls) != len(covered) {
			return out, fmt.Errorf("source %s: listing validator arrays of unequal lengths", l.SourceID)
		}
		for i := range urls {
			l.Listings = append(l.Listings, Listing{SourceID: l.SourceID, URL: urls[i], ETag: etags[i],
				LastModified: lastMods[i], CoveredSince: covered[i]})
		}
		if a.AttachmentID != nil {
			l.Attachments = append(l.Attachments, a.attachment())
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
	FeedRules                                      *domain.FeedRules
}

// dest is where Scan puts attachments.Columns.
func (a *nullAttachment) dest() []any {
	return []any{&a.AttachmentID, &a.FeedID, &a.FeedKind, &a.OrganizationID, &a.SourceID, &a.SourceType, &a.Details,
		&a.SourceEnabled, &a.FeedEnabled, &a.AttachedAt, &a.SourceEnabledAt, &a.FeedEnabledAt, &a.FeedRules}
}

func (a *nullAttachment) attachment() attachments.Attachment {
	return attachments.Attachment{
		AttachmentID: *a.AttachmentID, FeedID: *a.FeedID, FeedKind: *a.FeedKind, OrganizationID: *a.OrganizationID,
		SourceID: *a.SourceID, SourceType: *a.SourceType, Details: a.Details, SourceEnabled: *a.SourceEnabled,
		FeedEnabled: *a.FeedEnabled, AttachedAt: *a.AttachedAt, SourceEnabledAt: a.SourceEnabledAt, FeedEnabledAt: a.FeedEnabledAt,
		FeedRules: a.FeedRules,
	}
}

// Release is a successful crawl whose lease is to be handed back, with
// what its next poll is scheduled from.
type Release struct {
	SourceID uuid.UUID
	// Ended is when the crawl ended, which its schedule counts from.
	Ended time.Time
	// Note is kept as the source's last error (the documents cut short).
	Note    string
	Backlog bool
	// Covered is how far back the crawl looked; zero keeps what was.
	Covered time.Time
	// Fresh and Throttle are what the listings said about when to read
	// them again.
	Fresh, Throttle document.Hint
	// DueBy, when set, is the latest the next poll may be due, unless the
	// site asked for longer than the poll interval (a quick poll's, in
	// package ingest: the next whole read keeps the promise).
	DueBy time.Time
}

// FlushReleases writes successful crawls in one statement: each row,
// while this process still owns its lease, is handed back with its
// outcome and its next poll scheduled from when its crawl ended (now()
// minus how long ago that was, so that the schedule is counted on the
// database's clock, as every lease is).
func (s *Store) FlushReleases(ctx context.Context, rs []Release) error {
	n := len(rs)
	ids, notes, backlogs := make([]uuid.UUID, n), make([]string, n), make([]bool, n)
	covered, ago := make([]*time.Time, n), make([]int64, n)
	fresh, freshBy, throttle, throttleBy := make([]int64, n), make([]string, n), make([]int64, n), make([]string, n)
	dueBy := make([]int64, n)
	now := time.Now()
	for i, r := range rs {
		ids[i], notes[i], backlogs[i] = r.SourceID, r.Note, r.Backlog
		if !r.Covered.IsZero() {
			covered[i] = &rs[i].Covered
		}
		fresh[i], freshBy[i] = r.Fresh.For.Milliseconds(), r.Fresh.By
		throttle[i], throttleBy[i] = r.Throttle.For.Milliseconds(), r.Throttle.By
		ago[i] = now.Sub(r.Ended).Milliseconds()
		if !r.DueBy.IsZero() {
			// Milliseconds from the crawl's end; at least 1, as 0 is none.
			dueBy[i] = max(r.DueBy.Sub(r.Ended).Milliseconds(), 1)
		}
	}
	_, err := s.pool.Exec(ctx, s.releaseSQL, ids, notes, backlogs, covered, fresh, freshBy, throttle, throttleBy, ago, s.owner, dueBy)
	if err != nil {
		return fmt.Errorf("release %d sources: %w", n, err)
	}
	return nil
}

// ReleaseFailed hands back the lease of a source whose crawl failed,
// counting the failure and scheduling the next poll after delay, for
// reason.
func (s *Store) ReleaseFailed(ctx context.Context, sourceID uuid.UUID, crawlErr error, delay time.Duration, reason string) error {
	return s.Crawls.l.Release(ctx, sourceID, `failures = failures + 1, last_error = ?, backlog = false,
			next_at = now() + ? * interval '1 millisecond', last_crawl_at = now(), interval_ms = ?, interval_reason = ?`,
		Truncate(errString(crawlErr), 2000), delay.Milliseconds(), delay.Milliseconds(), reason)
}

// Why a source's next poll is when it is (crawl_state.interval_reason,
// the polling block's intervalReason), besides the site's own hints
// (document.By*).
const (
	ReasonInterval = "interval"
	ReasonBusy     = "busy"
	ReasonQuiet    = "quiet"
	ReasonPush     = "push"
	ReasonBacklog  = "backlog"
	ReasonBackoff  = "backoff"
)

// Schedule is the polling rule (package ingest, schedule.go) as the
// release of a successful crawl computes it.
type Schedule struct {
	// PollInterval, MinPollInterval and MaxPollInterval bound a source's
	// interval (ingest.Config).
	PollInterval, MinPollInterval, MaxPollInterval time.Duration
	// PollsPerArticle is how many polls a busy source gets per article.
	PollsPerArticle int
	// RecentArticles is how many of a source's newest articles of the
	// last week its observed interval is counted over.
	RecentArticles int
	// MaxCacheHint and MaxRetryAfter bound how far a site's freshness and
	// throttles lengthen its interval.
	MaxCacheHint, MaxRetryAfter time.Duration
	// Pushed is the condition, over the SQL expression source (a source
	// id), that a WebSub hub pushes the source (websub.PushedCondition):
	// such a source is polled at MaxPollInterval, as the fallback. Nil
	// means none is.
	Pushed func(source string) string
}

// week is how far back the observed interval looks.
const week = 7 * 24 * time.Hour

// buildReleaseSQL is FlushReleases' statement: it hands back the leases
// of owner $10 on the sources $1 and schedules each one's next poll from
// its outcome ($2 to $9, see Release).
func buildReleaseSQL(sch Schedule) string {
	ended := "now() - v.ago * interval '1 millisecond'"
	return `UPDATE crawl_state SET leased_until = NULL, lease_owner = NULL,
			failures = 0, last_error = v.note, backlog = v.backlog,
			last_crawl_at = ` + ended + `, last_success_at = ` + ended + `,
			covered_since = coalesce(v.covered, covered_since),
			freshness_ms = CASE WHEN v.fresh > 0 THEN v.fresh ELSE freshness_ms END,
			freshness_reason = CASE WHEN v.fresh > 0 THEN v.fresh_by ELSE freshness_reason END,
			watched_since = coalesce(watched_since, CASE WHEN NOT v.backlog THEN ` + ended + ` END),
			` + scheduleSQL(sch, ended) + `
		FROM unnest($1::uuid[], $2::text[], $3::boolean[], $4::timestamptz[], $5::bigint[], $6::text[], $7::bigint[], $8::text[], $9::bigint[], $11::bigint[])
			AS v(id, note, backlog, covered, fresh, fresh_by, throttle, throttle_by, ago, due_by)
		WHERE crawl_state.source_id = v.id AND crawl_state.lease_owner = $10`
}

// scheduleSQL is the multiple-column SET item that schedules a source's
// next poll after a successful crawl that ended at the SQL time ended (see
// the rule in package ingest, schedule.go): its observed interval, the
// interval (before jitter), why it is what it is, and the next poll, at
// once with a backlog, else after the interval jittered downwards by up to
// 10% so that sources attached together spread out without any waiting
// past the promise. It reads the release's row v (backlog, fresh,
// fresh_by, throttle, throttle_by; a freshness heard on an earlier poll is
// kept when this one heard none, as a 304 carries no feed ttl). It is one
// sub-select of the row, run once per row, so the release stays one
// statement; the observed interval reads at most RecentArticles entries of
// the crawl_seen index (source_id, effective_at), and the push check
// (Schedule.Pushed) websub's source index, each once: the OFFSET 0 keeps
// the planner from pulling the two up into every expression that uses them
// (six copies of each, measured).
func scheduleSQL(sch Schedule, ended string) string {
	poll, least, most := sch.PollInterval.Milliseconds(), sch.MinPollInterval.Milliseconds(), sch.MaxPollInterval.Milliseconds()
	// The observed interval: over the source's newest RecentArticles of
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
				ORDER BY seen.effective_at DESC LIMIT %d) r)`, week.Milliseconds(), sch.RecentArticles)
	}
	pushed := "false"
	if sch.Pushed != nil {
		pushed = sch.Pushed("v.id")
	}
	return fmt.Sprintf(`(observed_interval_ms, interval_ms, interval_reason, next_at) = (
		SELECT o.observed, s.interval, s.reason,
			%[1]s + CASE WHEN v.backlog THEN 0
				WHEN v.due_by > 0 AND s.interval <= %[3]d THEN least(v.due_by, s.interval * (0.9 + random() * 0.1))
				ELSE s.interval * (0.9 + random() * 0.1) END * interval '1 millisecond'
		FROM (SELECT %[2]s AS observed,
				%[14]s AS pushed
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
		ended, observed, poll, least, most, sch.PollsPerArticle, sch.MaxCacheHint.Milliseconds(), sch.MaxRetryAfter.Milliseconds(),
		ReasonBacklog, ReasonPush, ReasonBusy, ReasonQuiet, ReasonInterval, pushed)
}

// BringWithinInterval makes each source due later than within from now
// due at a random moment within it, leaving as they are the sources
// whose interval_reason is among keep (a site's own request), those
// backing off after failures, and those leased; it returns how many it
// moved. It changes nothing when every source is within the interval (one
// range read of the next_at index), and several processes running it
// together do not pile up: one that finds a row another is moving waits
// for that to commit and reads the row again, which is then within the
// interval (or, by the milliseconds between their starts, moved again
// within it).
func (s *Store) BringWithinInterval(ctx context.Context, within time.Duration, keep []string) (int64, error) {
	tag, err := s.pool.Exec(ctx, `UPDATE crawl_state SET next_at = now() + random() * $1 * interval '1 millisecond'
		WHERE next_at > now() + $1 * interval '1 millisecond' AND failures = 0
		  AND (leased_until IS NULL OR leased_until < now())
		  AND (interval_reason IS NULL OR interval_reason <> ALL($2::text[]))`,
		within.Milliseconds(), keep)
	if err != nil {
		return 0, fmt.Errorf("bring sources within the poll interval: %w", err)
	}
	return tag.RowsAffected(), nil
}

// SaveState keeps what the source's connector wants kept, while this
// process holds its lease.
func (s *Store) SaveState(ctx context.Context, sourceID uuid.UUID, state json.RawMessage) error {
	if _, err := s.Crawls.l.Update(ctx, sourceID, "connector_state = ?", string(state)); err != nil {
		return fmt.Errorf("keep connector state of source %s: %w", sourceID, err)
	}
	return nil
}

// MakeDue moves a source's next crawl to now when its crawls have not
// looked back to acceptingSince (covered_since), unless it is backing off
// (failures > 0).
func (s *Store) MakeDue(ctx context.Context, sourceID uuid.UUID, acceptingSince time.Time) error {
	_, err := s.db.NewRaw(`UPDATE crawl_state SET next_at = now()
		WHERE source_id = ? AND next_at > now() AND failures = 0
		  AND (covered_since IS NULL OR covered_since > ?)`, sourceID, acceptingSince).Exec(ctx)
	if err != nil {
		return fmt.Errorf("schedule source %s: %w", sourceID, err)
	}
	return nil
}

// Polling is a source's row of crawl_state as its schedule is shown.
type Polling struct {
	SourceID   uuid.UUID  `bun:"source_id"`
	NextAt     time.Time  `bun:"next_at"`
	LastAt     *time.Time `bun:"last_crawl_at"`
	IntervalMS *int64     `bun:"interval_ms"`
	ObservedMS *int64     `bun:"observed_interval_ms"`
	FreshMS    *int64     `bun:"freshness_ms"`
	Failures   int        `bun:"failures"`
	Reason     *string    `bun:"interval_reason"`
}

const pollingColumns = `source_id, next_at, last_crawl_at, interval_ms, observed_interval_ms, freshness_ms, failures, interval_reason`

// PollingOf reads a source's schedule if one of org's feeds has it
// attached; false when the crawler has not scheduled it or none has.
func PollingOf(ctx context.Context, db bun.IDB, org, sourceID uuid.UUID) (Polling, bool, error) {
	var r Polling
	err := db.NewRaw(`SELECT `+pollingColumns+` FROM crawl_state c WHERE source_id = ?
		AND EXISTS (SELECT 1 FROM ingest_attachments a WHERE a.source_id = c.source_id AND a.organization_id = ?)`,
		sourceID, org).Scan(ctx, &r)
	if errors.Is(err, sql.ErrNoRows) {
		return Polling{}, false, nil
	}
	if err != nil {
		return Polling{}, false, fmt.Errorf("read the schedule of source %s: %w", sourceID, err)
	}
	return r, true, nil
}

// Pollings reads every scheduled source's schedule.
func Pollings(ctx context.Context, db bun.IDB) ([]Polling, error) {
	var rows []Polling
	if err := db.NewRaw(`SELECT `+pollingColumns+` FROM crawl_state`).Scan(ctx, &rows); err != nil {
		return nil, fmt.Errorf("read crawl schedule: %w", err)
	}
	return rows, nil
}

// Backlog is how the schedule stands: sources scheduled, those due and
// not running, and how long the most overdue has been due (seconds).
type Backlog struct {
	Sources int     `bun:"sources"`
	Due     int     `bun:"due"`
	Lag     float64 `bun:"lag"`
}

// ScheduleBacklog reads how the schedule stands.
func ScheduleBacklog(ctx context.Context, db bun.IDB) (Backlog, error) {
	var agg Backlog
	err := db.NewRaw(`SELECT count(*) AS sources,
		count(*) FILTER (WHERE next_at <= now() AND (leased_until IS NULL OR leased_until < now())) AS due,
		coalesce(extract(epoch FROM now() - min(next_at) FILTER (WHERE next_at <= now()
			AND (leased_until IS NULL OR leased_until < now()))), 0)::float8 AS lag
		FROM crawl_state`).Scan(ctx, &agg)
	if err != nil {
		return Backlog{}, fmt.Errorf("read crawl schedule: %w", err)
	}
	return agg, nil
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// Truncate bounds a stored message to n bytes; cutting mid-rune would be
// invalid UTF-8, which Postgres rejects, hence the repair.
func Truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "")
}
