// Package ingest is the crawler role: it decides which source records are
// due, leases each so that one process crawls it at a time, turns what the
// crawl package finds into articles and news items through the command
// handler, and backfills newly attached sources from articles already known.
//
// It reads the projected attachment and article tables, which lag the event
// store by milliseconds, and its own operational tables (crawl_state,
// crawl_seen, crawl_failures, crawl_listings, ingest_backfills), which it
// writes directly. It never holds a database transaction open: every statement commits on
// its own, because an open transaction holds back the event store's read
// fence for every projector.
package ingest

import (
	"context"
	crand "crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"sync"
	"time"

	"github.com/uptrace/bun"

	"github.com/feedsvc/feedsvc/commands"
	"github.com/feedsvc/feedsvc/crawl"
)

// Defaults for zero Config fields.
const (
	DefaultPollInterval  = 10 * time.Minute
	DefaultConcurrency   = 4
	DefaultLeaseDuration = 5 * time.Minute
	DefaultTick          = time.Second
	DefaultRetryMax      = 6 * time.Hour
	DefaultDiscoveryTTL  = 24 * time.Hour
	DefaultGiveUpAfter   = 24 * time.Hour
)

// Config tunes a Worker. Zero values mean the documented default.
type Config struct {
	// PollInterval is how often a source is checked; each schedule is
	// jittered by ±10% so sources attached together spread out.
	PollInterval time.Duration
	// Concurrency is how many sources this process crawls at once.
	Concurrency int
	// LeaseDuration is how long a crawl or backfill lease lasts; it is
	// renewed while the work runs, so it only bounds how long a crashed
	// process keeps a source from being crawled by another.
	LeaseDuration time.Duration
	// Tick is how often the worker looks for due sources and backfills.
	Tick time.Duration
	// Owner names this process in leases; it must be unique per process.
	// Default: hostname, pid and a random suffix.
	Owner string
	// RetryBase and RetryMax bound the exponential backoff of a failing
	// source (crawl.NextAttempt). Defaults: min(PollInterval, 1m) and 6h.
	RetryBase time.Duration
	RetryMax  time.Duration
	// DiscoveryTTL is how long a site's discovered sitemaps and feeds are
	// reused before robots.txt and the home page are read again.
	DiscoveryTTL time.Duration
	// GiveUpAfter is how long a URL that keeps failing transiently (5xx,
	// timeouts) while the rest of its site answers is retried before it is
	// given up. It is counted in polls (GiveUpAfter / PollInterval, at
	// least three), and polls in which the whole site was down do not
	// count, so a site that is down for a while (5xx, timeouts, robots.txt
	// unreadable) loses none of the articles it listed meanwhile.
	GiveUpAfter time.Duration
}

func (c Config) withDefaults() Config {
	if c.PollInterval <= 0 {
		c.PollInterval = DefaultPollInterval
	}
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
		c.Owner = defaultOwner()
	}
	if c.RetryBase <= 0 {
		c.RetryBase = min(c.PollInterval, time.Minute)
	}
	if c.RetryMax <= 0 {
		c.RetryMax = max(DefaultRetryMax, c.RetryBase)
	}
	if c.DiscoveryTTL <= 0 {
		c.DiscoveryTTL = DefaultDiscoveryTTL
	}
	if c.GiveUpAfter <= 0 {
		c.GiveUpAfter = DefaultGiveUpAfter
	}
	return c
}

// defaultOwner is unique per process: two processes on one host differ by
// pid, and the random part covers pid reuse across container restarts.
func defaultOwner() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "unknown"
	}
	b := make([]byte, 4)
	_, _ = crand.Read(b) // crypto/rand.Read never fails on supported platforms
	return fmt.Sprintf("%s-%d-%s", host, os.Getpid(), hex.EncodeToString(b))
}

// Worker crawls due sources and runs backfills until its context ends.
type Worker struct {
	cmds   *commands.Handler
	db     *bun.DB
	client *crawl.Client
	cfg    Config
	log    *slog.Logger
	now    func() time.Time
}

// New returns a Worker; nothing runs until Run.
func New(cmds *commands.Handler, db *bun.DB, client *crawl.Client, cfg Config, logger *slog.Logger) *Worker {
	if logger == nil {
		logger = slog.Default()
	}
	cfg = cfg.withDefaults()
	return &Worker{cmds: cmds, db: db, client: client, cfg: cfg, log: logger.With("component", "ingest", "owner", cfg.Owner), now: time.Now}
}

// Owner is the name this worker takes leases under.
func (w *Worker) Owner() string { return w.cfg.Owner }

// Run schedules crawls and backfills every Tick until ctx ends, then waits
// for the work in flight to stop and hands its leases back. Database errors
// are logged and retried on the next tick rather than returned: the worker
// outlives a database restart. It returns nil once ctx ends.
func (w *Worker) Run(ctx context.Context) error {
	w.log.Info("ingestion worker running", "poll_interval", w.cfg.PollInterval.String(), "concurrency", w.cfg.Concurrency)
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); w.scheduleLoop(ctx) }()
	go func() { defer wg.Done(); w.backfillLoop(ctx) }()
	wg.Wait()
	w.log.Info("ingestion worker stopped")
	return nil
}

// scheduleLoop leases due sources up to Concurrency and crawls each in its
// own goroutine.
func (w *Worker) scheduleLoop(ctx context.Context) {
	slots := make(chan struct{}, w.cfg.Concurrency)
	var wg sync.WaitGroup
	defer wg.Wait()
	ticker := time.NewTicker(w.cfg.Tick)
	defer ticker.Stop()
	for {
		free := w.cfg.Concurrency - len(slots)
		if free > 0 {
			leases, err := w.leaseDue(ctx, free)
			if err != nil && ctx.Err() == nil {
				w.log.Warn("finding due sources failed", "err", err)
			}
			for _, l := range leases {
				slots <- struct{}{}
				wg.Add(1)
				go func() {
					defer wg.Done()
					defer func() { <-slots }()
					w.crawlLeased(ctx, l)
				}()
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
	}
}

// backfillLoop runs pending backfills one at a time; they are short (one
// append per known article) and rare (once per attachment).
func (w *Worker) backfillLoop(ctx context.Context) {
	ticker := time.NewTicker(w.cfg.Tick)
	defer ticker.Stop()
	for {
		if err := w.runBackfills(ctx); err != nil && ctx.Err() == nil {
			w.log.Warn("backfills failed", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
	}
}

// nextPoll is PollInterval ±10%, so that sources attached in one burst do
// not stay in lockstep forever.
func (w *Worker) nextPoll() time.Duration {
	p := w.cfg.PollInterval
	return p - p/10 + time.Duration(rand.Int64N(int64(p/5)+1))
}

// retryDelay is the backoff after the failures-th consecutive failure.
func (w *Worker) retryDelay(failures int) time.Duration {
	return crawl.NextAttempt(failures, w.cfg.RetryBase, w.cfg.RetryMax)
}

// renewWhile keeps a lease alive while work runs, renewing it at a third of
// its duration; when the lease is lost (another process took it after it
// expired, e.g. during a long database outage), cancel stops the work so
// two processes do not keep crawling the same source.
func (w *Worker) renewWhile(ctx context.Context, renew func(context.Context) (bool, error), cancel context.CancelFunc, what string) func() {
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		t := time.NewTicker(w.cfg.LeaseDuration / 3)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
			}
			held, err := renew(ctx)
			switch {
			case err != nil:
				// A transient error: the lease is still ours until it expires.
				w.log.Warn("lease renewal failed", "lease", what, "err", err)
			case !held:
				w.log.Warn("lease lost; stopping", "lease", what)
				cancel()
				return
			}
		}
	}()
	return func() { close(done); <-stopped }
}

// releaseContext is for statements that must run after ctx ended (handing
// back a lease on shutdown), bounded so a dead database cannot hang it.
func releaseContext() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), 5*time.Second)
}

// millis renders a duration for the SQL idiom `? * interval '1 millisecond'`.
func millis(d time.Duration) int64 { return d.Milliseconds() }
