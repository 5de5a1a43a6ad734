package ingest

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/ingest/connector"
	"github.com/feedsvc/feedsvc/ingest/crawlstate"
	"github.com/feedsvc/feedsvc/ingest/document"
	"github.com/feedsvc/feedsvc/internal/lease"
)

// leased is a source this process holds the crawl lease of, with what the
// crawl needs from its crawl_state and what the claim read beside it
// (crawlstate.Leased).
type leased = crawlstate.Leased

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
		w.claims.Add(1)
		claimed, err = w.store.ClaimScheduled(ctx, w.connectors.SourceTypes(), n-len(out))
		out = append(out, claimed...)
	}
	if err != nil {
		// Never-crawled sources found but not crawled are looked for
		// again at the next tick (lookForNew).
		w.newLook.failed = w.newLook.failed || withNew
		rctx, cancel := lease.ReleaseContext()
		defer cancel()
		w.handBack(rctx, out)
		return nil, err
	}
	return out, nil
}

// handBack hands back the leases of sources claimed but not crawled,
// leaving their schedule as it was: they are due, and the next claim,
// here or in another process, takes them.
func (w *Worker) handBack(ctx context.Context, ls []leased) {
	for _, l := range ls {
		if err := w.store.Crawls.Release(ctx, l.SourceID); err != nil {
			w.log.Warn("handing back a lease failed", "source_id", l.SourceID, "err", err)
		}
	}
}

// claimAhead is how many times Concurrency a claim takes at most beyond
// the free slots when the last claim filled them all (scheduleLoop).
const claimAhead = 3

// crawlPace is the recent duration of a crawl, smoothed (each crawl
// weighs an eighth), for how many sources to claim ahead.
type crawlPace struct {
	avg atomic.Int64 // nanoseconds; 0 until a crawl ended
}

func (p *crawlPace) add(d time.Duration) {
	for {
		old := p.avg.Load()
		next := int64(d)
		if old > 0 {
			next = old + (int64(d)-old)/8
		}
		if p.avg.CompareAndSwap(old, max(next, 1)) {
			return
		}
	}
}

// ahead is how many sources slots finish in one tick at this pace, at
// most claimAhead times slots; none before a crawl ended.
func (p *crawlPace) ahead(slots int, tick time.Duration) int {
	avg := p.avg.Load()
	if avg <= 0 {
		return 0
	}
	return int(min(int64(claimAhead*slots), int64(slots)*int64(tick)/avg))
}

// claimedAhead are the sources the schedule loop claimed beyond its free
// slots, oldest claim first, each with when it was claimed. Only the
// schedule loop's goroutine uses it.
type claimedAhead struct {
	ls []leased
	at []time.Time
}

func (q *claimedAhead) len() int { return len(q.ls) }

func (q *claimedAhead) put(l leased, at time.Time) {
	q.ls, q.at = append(q.ls, l), append(q.at, at)
}

// take removes up to n sources claimed at or after fresh, to crawl, and
// every source claimed before it that it passes on the way, to hand back.
func (q *claimedAhead) take(n int, fresh time.Time) (ready, stale []leased) {
	i := 0
	for ; i < len(q.ls) && len(ready) < n; i++ {
		if q.at[i].Before(fresh) {
			stale = append(stale, q.ls[i])
		} else {
			ready = append(ready, q.ls[i])
		}
	}
	q.ls, q.at = q.ls[i:], q.at[i:]
	return ready, stale
}

// takeAll empties the queue.
func (q *claimedAhead) takeAll() []leased {
	ls := q.ls
	q.ls, q.at = nil, nil
	return ls
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
		ok, err := w.store.Crawls.Claim(ctx, id)
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
	out, err := w.store.LoadLeased(ctx, held)
	if err != nil {
		return leasedIDs(held), fmt.Errorf("new sources: %w", err)
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
	var changedSince time.Time
	if !full {
		changedSince = w.newLook.last.Add(-newSourcesSlack)
	}
	ids, err := w.store.NewSources(ctx, w.connectors.SourceTypes(), n, changedSince)
	w.newLook.failed = err != nil
	if err != nil {
		return nil, err
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
		w.releases.add(pendingRelease{Release: crawlstate.Release{SourceID: l.SourceID, Ended: time.Now(), Note: stats.cutOffNote(),
			Backlog: stats.Backlog, Covered: stats.Covered, Fresh: stats.Fresh, Throttle: stats.Throttle, DueBy: stats.DueBy}, stopRenew: stopRenew})
		return nil
	case failed:
		delay, reason := w.failureDelay(l.Failures+1, crawlErr)
		err = w.store.ReleaseFailed(ctx, l.SourceID, crawlErr, delay, reason)
	default:
		err = w.store.Crawls.Release(ctx, l.SourceID)
	}
	if err != nil {
		return fmt.Errorf("source %s: %w", l.SourceID, err)
	}
	return nil
}

// pendingRelease is a successful crawl whose lease is still to be handed
// back (release).
type pendingRelease struct {
	crawlstate.Release
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
	q.urgent = q.urgent || r.Backlog
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
		if r.SourceID == id {
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
	out := make([]crawlstate.Release, len(rs))
	for i, r := range rs {
		out[i] = r.Release
		dueAgain = dueAgain || r.Backlog
	}
	if err := w.store.FlushReleases(ctx, out); err != nil {
		w.log.Error("releasing sources failed", "sources", len(rs), "err", err)
		return false
	}
	return dueAgain
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
)

// siteReasons are the reasons that are the site's own request, which
// bringWithinInterval leaves as they are.
var siteReasons = []string{document.ByCacheControl, document.ByExpires, document.ByFeedTTL, document.ByFeedUpdatePeriod,
	document.ByRetryAfter, document.ByCrawlDelay}

// schedule is the rule above for the store, which computes it in the
// statement that releases successful crawls (crawlstate.Schedule): its
// observed interval looks back a week, over the source's newest
// recentArticles.
func schedule(cfg Config, pushed func(source string) string) crawlstate.Schedule {
	return crawlstate.Schedule{PollInterval: cfg.PollInterval, MinPollInterval: cfg.MinPollInterval, MaxPollInterval: cfg.MaxPollInterval,
		PollsPerArticle: pollsPerArticle, RecentArticles: recentArticles, MaxCacheHint: maxCacheHint, MaxRetryAfter: maxRetryAfter,
		Pushed: pushed}
}

// failureDelay is the backoff after a failed crawl, or longer when the
// source asked for it (a site's Retry-After on 429 and 503, up to
// maxRetryAfter), and which of the two it is.
func (w *Worker) failureDelay(failures int, err error) (time.Duration, string) {
	d := w.retryDelay(failures)
	if after := connector.JudgementOf(err).RetryAfter; after > d {
		return min(after, maxRetryAfter), document.ByRetryAfter
	}
	return d, crawlstate.ReasonBackoff
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
	return w.store.BringWithinInterval(ctx, w.cfg.MaxPollInterval, siteReasons)
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
	return w.store.MakeDue(ctx, sourceID, acceptingSince)
}
