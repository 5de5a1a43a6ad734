// Package ingest is the crawler role: it decides which source records are
// due, leases each so that one process crawls it at a time, has the
// source's connector (package connector) list and fetch what is new, reads
// every document for everything it holds (an article, events) and records
// that as facts of the source whatever feeds are attached, then hands each
// fact to every attached feed whose kind takes it, and backfills newly
// attached sources from the facts already recorded (intake.go). It knows
// no kind of source and no kind of feed: those are the registered
// connectors and intakes.
//
// It reads the attachments and articles read models (ingest/attachments,
// readmodel/articles), which lag the event store by milliseconds, and
// keeps its own state (schedule and leases, seen and failed URLs, listing
// validators, happenings and their holders, backfills) in the store of
// package ingest/crawlstate, which it writes directly. No file of this
// package writes SQL: what the crawl reads and writes is the store's
// typed methods and the read models' queries (a test in
// internal/layers keeps it so).
package ingest

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/uptrace/bun"

	"github.com/feedsvc/feedsvc/commands"
	"github.com/feedsvc/feedsvc/ingest/attachments"
	"github.com/feedsvc/feedsvc/ingest/calendar"
	"github.com/feedsvc/feedsvc/ingest/connector"
	"github.com/feedsvc/feedsvc/ingest/crawlstate"
	"github.com/feedsvc/feedsvc/internal/backoff"
	"github.com/feedsvc/feedsvc/internal/lease"
	"github.com/feedsvc/feedsvc/internal/pgnotify"
	readarticles "github.com/feedsvc/feedsvc/readmodel/articles"
)

// Defaults for zero Config fields.
const (
	DefaultPollInterval  = 10 * time.Minute
	DefaultConcurrency   = 4
	DefaultLeaseDuration = 5 * time.Minute
	DefaultTick          = time.Second
	DefaultRetryMax      = 6 * time.Hour
	DefaultGiveUpAfter   = 24 * time.Hour
	// DefaultMaxFetchesPerCrawl bounds one crawl, so that a site
	// publishing its whole archive at once does not hold a crawl slot for
	// hours; the source is crawled again at once until its backlog is done
	// (newest candidates go first), taking turns with other due sources.
	DefaultMaxFetchesPerCrawl = 200
)

// Config tunes a Worker. Zero values mean the documented default.
type Config struct {
	// PollInterval is the promise: every enabled source is checked at
	// least this often, whatever it published, unless its site asks for
	// less (schedule.go). Each schedule is jittered down by up to 10% so
	// sources attached together spread out.
	PollInterval time.Duration
	// MinPollInterval is the shortest interval of a busy source, which is
	// checked about pollsPerArticle times per article it publishes.
	// Default: DefaultMinPollInterval, or PollInterval if shorter; at
	// PollInterval no source is checked sooner.
	MinPollInterval time.Duration
	// MaxPollInterval, when above PollInterval, lets a quiet source be
	// checked less often, by the same rule, up to it: the operator trading
	// freshness for cost. A source a WebSub hub pushes is polled at it, as
	// the fallback. Zero means PollInterval.
	MaxPollInterval time.Duration
	// Concurrency is how many sources this process crawls at once.
	Concurrency int
	// LeaseDuration is how long a crawl or backfill lease lasts; it is
	// renewed while the work runs, so it only bounds how long a crashed
	// process keeps a source from being crawled by another.
	LeaseDuration time.Duration
	// Tick is how often the worker claims due sources and hands back the
	// leases of finished crawls. It looks for never-crawled sources and
	// pending backfills every tick too while it is not told of new
	// attachments (Parts.Notifications not listening); while it is, only
	// when told, when the last look found as many as it could take, and
	// once a minute (newSourcesFullScan).
	Tick time.Duration
	// Owner names this process in leases; it must be unique per process.
	// Default: hostname, pid and a random suffix.
	Owner string
	// RetryBase and RetryMax bound the exponential backoff of a failing
	// source (backoff.Delay). Defaults: min(PollInterval, 1m) and 6h.
	RetryBase time.Duration
	RetryMax  time.Duration
	// MaxFetchesPerCrawl is how many documents one crawl fetches at most.
	MaxFetchesPerCrawl int
	// GiveUpAfter is how long a URL that keeps failing transiently (5xx,
	// timeouts) while the rest of its site answers is retried before it is
	// given up. It is counted in polls (GiveUpAfter / PollInterval, at
	// least three), and polls in which the whole site was down do not
	// count, so a site that is down for a while (5xx, timeouts, robots.txt
	// unreadable) loses none of the articles it listed meanwhile.
	GiveUpAfter time.Duration
	// Documents bound the work of reading one document for events (the
	// event sink applies them); MaxHappeningsPerCrawl bounds the events one
	// crawl of a source records (calendar.DefaultMaxHappeningsPerCrawl when
	// zero): the rest wait for the next crawl.
	Documents             calendar.Limits
	MaxHappeningsPerCrawl int
	// StoreTimeout bounds the database steps of one fetched document
	// (DefaultStoreTimeout when zero); a document whose events take longer
	// is gone on with at the next poll.
	StoreTimeout time.Duration
	// RereadWholeEvery bounds how long an event document found unchanged
	// on a re-read (a 304 to its validators, or the same bytes) is trusted
	// and left unread: past it the document is read whole again, whatever
	// it answers (DefaultRereadWholeEvery when zero). Unchanged bytes hold
	// the same happenings; but a document takes up a happening that
	// another document let go (holders.go) only when it is read whole, and
	// this bounds that wait.
	RereadWholeEvery time.Duration
}

func (c Config) withDefaults() Config {
	if c.PollInterval <= 0 {
		c.PollInterval = DefaultPollInterval
	}
	c.MaxPollInterval = max(c.MaxPollInterval, c.PollInterval)
	if c.MinPollInterval <= 0 {
		c.MinPollInterval = DefaultMinPollInterval
	}
	c.MinPollInterval = min(c.MinPollInterval, c.PollInterval)
	if c.Concurrency <= 0 {
		c.Concurrency = DefaultConcurrency
	}
	if c.LeaseDuration <= 0 {
		c.LeaseDuration = DefaultLeaseDuration
	}
	if c.Tick <= 0 {
		c.Tick = DefaultTick
	}
	if c.Owner == "" {
		c.Owner = lease.DefaultOwner()
	}
	if c.RetryBase <= 0 {
		c.RetryBase = min(c.PollInterval, time.Minute)
	}
	if c.RetryMax <= 0 {
		c.RetryMax = max(DefaultRetryMax, c.RetryBase)
	}
	if c.MaxFetchesPerCrawl <= 0 {
		c.MaxFetchesPerCrawl = DefaultMaxFetchesPerCrawl
	}
	if c.GiveUpAfter <= 0 {
		c.GiveUpAfter = DefaultGiveUpAfter
	}
	if c.StoreTimeout <= 0 {
		c.StoreTimeout = DefaultStoreTimeout
	}
	if c.MaxHappeningsPerCrawl <= 0 {
		c.MaxHappeningsPerCrawl = calendar.DefaultMaxHappeningsPerCrawl
	}
	if c.RereadWholeEvery <= 0 {
		c.RereadWholeEvery = DefaultRereadWholeEvery
	}
	return c
}

// Parts are what a Worker works with.
type Parts struct {
	// DB holds the crawler's tables (its store, ingest/crawlstate) and
	// the read models it reads.
	DB *bun.DB
	// Pool is the pgx pool DB shares. The statements the schedule loop
	// runs every tick go through it with bound arguments (crawlstate's
	// schedule.go): their texts never change, so pgx prepares each once
	// per connection and Postgres neither parses nor describes them again.
	Pool *pgxpool.Pool
	// Connectors read the sources; sources of a type none reads are not
	// crawled.
	Connectors *connector.Registry
	// Commands record what crawls find: articles, and the happenings
	// documents hold (recorders.go).
	Commands *commands.Handler
	// Pushed is the condition, over an SQL expression naming a source
	// id, that a WebSub hub pushes the source (websub.PushedCondition):
	// such a source is polled at MaxPollInterval, as the fallback. Nil
	// means no source is pushed.
	Pushed func(source string) string
	// Intakes put what sources hold into feeds, one per feed kind;
	// attachments of a kind without one get nothing.
	Intakes *Intakes
	// Notifications, when set, tells the worker when an attachment became
	// crawlable (attachments.CrawlableChannel), so that it looks for new
	// sources and pending backfills when told rather than every tick;
	// while it is nil or not listening, the worker looks every tick. New
	// registers on it, so it must not be running yet.
	Notifications *pgnotify.Listener
}

// Worker crawls due sources and runs backfills until its context ends.
type Worker struct {
	// store is the crawler's own state (schedule and leases, seen and
	// failed URLs, listings, happenings and holders, backfills);
	// attachments and knownArticles are the read models it reads.
	store         *crawlstate.Store
	attachments   *attachments.Queries
	knownArticles *readarticles.Queries
	connectors    *connector.Registry
	articles      ArticleRecorder
	happenings    HappeningRecorder
	intakes       *Intakes
	cfg           Config
	log           *slog.Logger
	now           func() time.Time
	// backlogs are what crawls cut short left for the next (backlog.go).
	backlogs *backlogs
	// whole are the sources' last whole reads, for quick polls (quick.go).
	whole wholeReads
	// articleQueues batch the articles crawls store (articles.go).
	articleQueues articleQueues
	// releases are the successful crawls whose leases are still to be
	// handed back (schedule.go, release).
	releases releaseQueue
	// newLook is when the schedule loop last looked for never-crawled
	// sources, and last read every attachment for them (newSources);
	// more: the last look found as many as it could take.
	// failed: the last look, or the leasing of what it found, failed, and
	// the next tick looks again.
	newLook struct {
		last, full   time.Time
		more, failed bool
	}
	// backfillLook is the same for pending backfills (pendingBackfills),
	// which only the backfill loop reads; retry: a backfill of the last
	// run did not finish (failed, or the articles projection was behind),
	// or the run failed, and the next tick looks again.
	backfillLook struct {
		last, full  time.Time
		more, retry bool
	}
	// notifications says whether the worker is being told of crawlable
	// attachments; newHeard and backfillHeard are set when it is told (or
	// starts being told), and taken by the next look of each loop, which
	// wakeNew and wakeBackfill wake at once.
	notifications           *pgnotify.Listener
	newHeard, backfillHeard atomic.Bool
	// claims counts the claims of due sources (ClaimScheduled), for the
	// tests of how few a burst of due sources takes.
	claims                atomic.Int64
	wakeNew, wakeBackfill chan struct{}
	// heard spaces the wakes notifications bring (crawlableHeard): one is
	// pending, the last was at last.
	heard struct {
		mu      sync.Mutex
		pending bool
		last    time.Time
	}
}

// New returns a Worker; nothing runs until Run.
func New(parts Parts, cfg Config, logger *slog.Logger) *Worker {
	if logger == nil {
		logger = slog.Default()
	}
	cfg = cfg.withDefaults()
	log := logger.With("component", "ingest", "owner", cfg.Owner)
	w := &Worker{
		store: crawlstate.New(parts.DB, parts.Pool, crawlstate.Options{Owner: cfg.Owner, LeaseDuration: cfg.LeaseDuration,
			Schedule: schedule(cfg, parts.Pushed), Logger: log}),
		attachments:   attachments.NewQueries(parts.DB),
		knownArticles: readarticles.NewQueries(parts.DB),
		connectors:    parts.Connectors,
		articles:      articleRecorder{cmds: parts.Commands},
		happenings:    happeningReader{cmds: parts.Commands, log: logger, limits: cfg.Documents},
		intakes:       parts.Intakes,
		cfg:           cfg, log: log, now: time.Now,
		backlogs:      newBacklogs(cfg.LeaseDuration),
		notifications: parts.Notifications,
		wakeNew:       make(chan struct{}, 1),
		wakeBackfill:  make(chan struct{}, 1),
	}
	parts.Notifications.On(attachments.CrawlableChannel, w.crawlableHeard)
	return w
}

// crawlableHeard is called when an attachment became crawlable somewhere
// (or the listener starts listening, having missed what came before): both
// loops look soon, at most once per heardSpacing. A burst of attaches
// sends a notification per projected batch, and each look reads the
// attachments of the last minute (newSourcesSlack) and claims: looking
// once per notification cost more than the attaches themselves.
func (w *Worker) crawlableHeard() {
	h := &w.heard
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.pending {
		return
	}
	h.pending = true
	time.AfterFunc(max(0, heardSpacing-time.Since(h.last)), w.crawlableWake)
}

// heardSpacing is the least time between two wakes crawlableHeard makes.
const heardSpacing = 200 * time.Millisecond

// crawlableWake has both loops look at once.
func (w *Worker) crawlableWake() {
	h := &w.heard
	h.mu.Lock()
	h.pending, h.last = false, time.Now()
	h.mu.Unlock()
	w.newHeard.Store(true)
	w.backfillHeard.Store(true)
	for _, c := range []chan struct{}{w.wakeNew, w.wakeBackfill} {
		select {
		case c <- struct{}{}:
		default:
		}
	}
}

// lookForNew says whether this turn of the schedule loop (a tick's when
// ticked) looks for never-crawled sources: when told of a crawlable
// attachment since the last look, or the last look found as many as it
// could take (a burst of attaches: their first polls then go at the
// crawl's pace, not at Concurrency per tick); and at a tick, also when not
// being told (every tick, as before notifications), after a failed look,
// and when the full scan is due (newSourcesFullScan: it finds what the
// notifications cannot, such as an attachment projected long after its
// event). The look that follows a true answer takes the notification.
func (w *Worker) lookForNew(ticked bool) bool {
	if w.newHeard.Swap(false) || w.newLook.more {
		return true
	}
	return ticked && (!w.notifications.Listening() || w.newLook.failed || fullScanDue(w.newLook.full))
}

// lookForBackfills is lookForNew for the backfill loop: at a tick it also
// looks again after a run that left a backfill unfinished (retry).
func (w *Worker) lookForBackfills(ticked bool) bool {
	if w.backfillHeard.Swap(false) || w.backfillLook.more {
		return true
	}
	return ticked && (!w.notifications.Listening() || w.backfillLook.retry || fullScanDue(w.backfillLook.full))
}

// fullScanDue says whether a look whose last full scan was at full is to
// read every attachment.
func fullScanDue(full time.Time) bool {
	return full.IsZero() || time.Since(full) >= newSourcesFullScan
}

// Run schedules crawls and backfills until ctx ends (claims every Tick,
// new sources and backfills when told of them, see Config.Tick), then
// waits for the work in flight to stop and hands its leases back. Database errors
// are logged and retried on the next tick rather than returned: the worker
// outlives a database restart. It returns nil once ctx ends.
func (w *Worker) Run(ctx context.Context) error {
	w.log.Info("ingestion worker running", "poll_interval", w.cfg.PollInterval.String(),
		"min_poll_interval", w.cfg.MinPollInterval.String(), "max_poll_interval", w.cfg.MaxPollInterval.String(),
		"concurrency", w.cfg.Concurrency)
	if n, err := w.bringWithinInterval(ctx); err != nil {
		w.log.Warn("bringing sources within the poll interval failed; they are polled when due", "err", err)
	} else if n > 0 {
		w.log.Info("sources scheduled beyond the poll interval brought within it", "sources", n,
			"interval", w.cfg.MaxPollInterval.String())
	}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); w.scheduleLoop(ctx) }()
	go func() { defer wg.Done(); w.backfillLoop(ctx) }()
	wg.Wait()
	w.log.Info("ingestion worker stopped")
	return nil
}

// scheduleLoop leases due sources up to Concurrency and crawls each in its
// own goroutine. It works in batches, so that a poll that finds nothing
// new costs a share of two statements rather than statements of its own:
// on each tick it hands back the leases of the crawls that succeeded since
// (flushReleases) and claims every due source it has room for. Between
// ticks a crawl that ends brings the next claim forward only when the
// last one filled every free slot (more may be due) and a quarter of the
// slots are free again, or when a crawl left a backlog (that source is due
// again at once); a notification of a crawlable attachment brings it
// forward at once, so that a new source's first poll starts within
// milliseconds of its projection. Never-crawled sources are looked for
// only on the turns lookForNew says.
//
// When a claim filled every free slot, more are likely due than there are
// slots: the next claim then also takes sources beyond the free slots, as
// many as the slots finish in one Tick at the crawls' recent pace (at
// most claimAhead times Concurrency), and slots that free up take those
// before anything is claimed again. Without it, a process whose slots are
// all busy (10,000 sites at the default 4 slots) claimed once per
// finished crawl, one or two sources a statement: 14 claims a second and
// a fifth of its Postgres statement time at 10,000 sites
// (bench/freshness/README.md, ninth run). Bounded by the pace, what is
// claimed ahead starts within about a tick, and a process with slow
// crawls claims little ahead, leaving due sources to other processes'
// free slots. One that waited past a third of its lease is handed back
// rather than crawled (its lease is renewed only once its crawl starts),
// and those still waiting at shutdown are handed back.
func (w *Worker) scheduleLoop(ctx context.Context) {
	slots := make(chan struct{}, w.cfg.Concurrency)
	freed := make(chan struct{}, 1)
	var wg sync.WaitGroup
	var ahead claimedAhead
	var pace crawlPace
	defer func() {
		wg.Wait()
		rctx, cancel := lease.ReleaseContext()
		defer cancel()
		w.handBack(rctx, ahead.takeAll())
		w.flushReleases(rctx)
	}()
	// start crawls a leased source in a slot of its own.
	start := func(l leased) {
		slots <- struct{}{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			began := time.Now()
			w.crawlLeased(ctx, l)
			pace.add(time.Since(began))
			<-slots
			select {
			case freed <- struct{}{}:
			default:
			}
		}()
	}
	ticker := time.NewTicker(w.cfg.Tick)
	defer ticker.Stop()
	batch := max(1, w.cfg.Concurrency/4)
	// ticked: this turn is a tick's (the first pass counts as one). more:
	// the last claim got as many sources as it asked for.
	ticked, more := true, false
	for {
		pending, urgent := w.releases.state()
		dueAgain := false
		if pending > 0 && (ticked || urgent) {
			dueAgain = w.flushReleases(ctx)
		}
		free := w.cfg.Concurrency - len(slots)
		if free > 0 && ahead.len() > 0 {
			ready, stale := ahead.take(free, time.Now().Add(-w.cfg.LeaseDuration/3))
			for _, l := range ready {
				start(l)
			}
			if len(stale) > 0 {
				rctx, cancel := lease.ReleaseContext()
				w.handBack(rctx, stale)
				cancel()
			}
			free -= len(ready)
		}
		if free > 0 && ahead.len() == 0 && (ticked || dueAgain || w.newHeard.Load() || (more && free >= batch)) {
			want := free
			if more {
				want += pace.ahead(w.cfg.Concurrency, w.cfg.Tick)
			}
			leases, err := w.leaseDue(ctx, want, w.lookForNew(ticked))
			if err != nil && ctx.Err() == nil {
				w.log.Warn("finding due sources failed", "err", err)
			}
			more = len(leases) == want
			for i, l := range leases {
				if i < free {
					start(l)
				} else {
					ahead.put(l, time.Now())
				}
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
			ticked = true
		case <-freed:
			ticked = false
		case <-w.wakeNew:
			ticked = false
		}
	}
}

// backfillLoop runs pending backfills one at a time; they are short (one
// append per known article) and rare (once per attachment). It looks for
// them on the turns lookForBackfills says: at once when told of a
// crawlable attachment, else at ticks.
func (w *Worker) backfillLoop(ctx context.Context) {
	ticker := time.NewTicker(w.cfg.Tick)
	defer ticker.Stop()
	ticked := true
	for {
		if w.lookForBackfills(ticked) {
			err := w.runBackfills(ctx)
			if err != nil && ctx.Err() == nil {
				w.log.Warn("backfills failed", "err", err)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
			ticked = true
		case <-w.wakeBackfill:
			ticked = false
		}
	}
}

// retryDelay is the backoff after the failures-th consecutive failure.
func (w *Worker) retryDelay(failures int) time.Duration {
	return backoff.Delay(failures, w.cfg.RetryBase, w.cfg.RetryMax)
}
