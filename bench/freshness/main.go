// Command freshness measures how soon a new article reaches a user: a fake
// web of n sites on loopback (bench/internal/fakeweb) publishing at random
// instants (a Poisson process per site, a few busy sites and many quiet
// ones), attached to `feedsvc serve` (a built binary, given only its poll
// interval) and, in the same run, to Miniflux built from its source (its
// round-robin scheduler at the same interval, and its entry-frequency
// scheduler at its defaults). For each it reports the time from an
// article's publication to its item (the system's own timestamp, a client
// polling the list, feedsvc's live stream, and, for the event pages of
// venues, feedsvc's event.item_added webhook): p50, p99 and max for every
// source and for the busiest tenth; the CPU of the service and of its
// Postgres backends per 1,000 sites per hour; and freshness per CPU-second.
// See bench/freshness/README.md.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/feedsvc/feedsvc/bench/internal/fakeweb"
	"github.com/feedsvc/feedsvc/bench/internal/systems"
)

type options struct {
	feedsvc, miniflux  string
	systems            string
	n                  int
	interval           time.Duration
	window, drain      time.Duration
	settle             time.Duration
	history            time.Duration
	feedItems, sitemap int
	busyShare          float64
	busyRates          rateRange
	quietRates         rateRange
	venueShare         float64
	listPoll           time.Duration
	seed               uint64
	admin              string
	pgPort             int
	pgBin, pgDir       string
	port, attachers    int
	perFeed            int
	feedsvcEnv         stringList
	pgSet              stringList
	deadline           time.Duration
	together           bool
	sharedWeb          bool
}

type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, ",") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }

func main() {
	var o options
	var busy, quiet string
	flag.StringVar(&o.feedsvc, "feedsvc", "", "feedsvc binary (`go build -o BIN ./cmd/feedsvc`)")
	flag.StringVar(&o.miniflux, "miniflux", "", "miniflux binary, built from its source outside the repository; empty skips it")
	flag.StringVar(&o.systems, "systems", "feedsvc,miniflux,miniflux-ef", "which to run, one after the other: feedsvc; miniflux (round-robin at -interval); miniflux-ef (entry frequency, its defaults)")
	flag.IntVar(&o.n, "n", 1000, "sites")
	flag.DurationVar(&o.interval, "interval", 10*time.Minute, "poll interval: feedsvc's FEEDSVC_POLL_INTERVAL (nothing else of its schedule is set), Miniflux's round-robin interval (whole minutes)")
	flag.DurationVar(&o.window, "window", time.Hour, "publications counted: those in this window, after the setup (every source polled once, backfills done) and -settle")
	flag.DurationVar(&o.drain, "drain", 0, "after the window, wait at most this long for its publications to be delivered (default: 2 intervals + 2 min)")
	flag.DurationVar(&o.settle, "settle", time.Minute, "wait after the setup before the window starts")
	flag.DurationVar(&o.history, "history", 7*24*time.Hour, "how far back each site's articles go when the run starts (both systems' adaptive schedulers count a week)")
	flag.IntVar(&o.feedItems, "feed-items", 20, "articles in each site's RSS feed (newest)")
	flag.IntVar(&o.sitemap, "sitemap-items", 1000, "articles in each site's sitemap (newest)")
	flag.Float64Var(&o.busyShare, "busy", 0.1, "share of busy sites")
	flag.StringVar(&busy, "busy-rates", "2:8/h", "busy sites' rates, drawn log-uniformly (LO:HI/h or /d)")
	flag.StringVar(&quiet, "quiet-rates", "0.0714:3/d", "the other sites' rates, drawn log-uniformly (one in two weeks to three a day)")
	flag.Float64Var(&o.venueShare, "venues", 0.1, "share of sites, drawn among the quiet ones, whose articles are event pages (their sources also attached to event feeds, for the webhook)")
	flag.DurationVar(&o.listPoll, "list-poll", 5*time.Second, "how often the observer reads the item lists (feedsvc: each news feed's list with its cursor; Miniflux: /v1/entries)")
	flag.Uint64Var(&o.seed, "seed", 1, "seed of the sites' rates and publication times")
	flag.StringVar(&o.admin, "db", "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable", "admin DSN of the Postgres server, with -pg-port 0")
	flag.IntVar(&o.pgPort, "pg-port", 15499, "start a Postgres cluster of the run's own on this port (the machine's binaries and settings; 0 uses -db)")
	flag.StringVar(&o.pgBin, "pg-bin", "/usr/lib/postgresql/15/bin", "Postgres binaries, for -pg-port")
	flag.StringVar(&o.pgDir, "pg-dir", "/tmp/bench-freshness-pg", "data directory of -pg-port's cluster (emptied first, removed after)")
	flag.IntVar(&o.port, "port", 18490, "port of every fake site")
	flag.IntVar(&o.attachers, "attachers", 8, "attach requests at once during the setup")
	flag.IntVar(&o.perFeed, "per-feed", 500, "feedsvc: sources per news feed (and per event feed)")
	flag.Var(&o.pgSet, "pg-set", "NAME=VALUE added to -pg-port's cluster settings (repeatable), e.g. shared_preload_libraries=pg_stat_statements to see where Postgres's CPU goes; the headline runs set none")
	flag.Var(&o.feedsvcEnv, "feedsvc-env", "KEY=VALUE added to feedsvc's environment (repeatable; the headline runs set none)")
	flag.DurationVar(&o.deadline, "deadline", 0, "on time: listed within this long of publication (default: -interval)")
	flag.BoolVar(&o.together, "together", false, "run the systems at the same time, each on sites of its own that publish the same articles at the same instants (a second web on -port+1, ...) and a Postgres cluster of its own (-pg-port+1, ...), their windows aligned: the same publications and the same outside load for each")
	flag.BoolVar(&o.sharedWeb, "shared-web", false, "with -together, one web for every system (a web listens on one address per site: two webs of 10,000 sites pass a 20,000 open-file limit); the requests at the sites are then counted for all systems together")
	flag.Parse()
	var err error
	if o.busyRates, err = parseRates(busy); err != nil {
		log.Fatal(err)
	}
	if o.quietRates, err = parseRates(quiet); err != nil {
		log.Fatal(err)
	}
	if o.drain <= 0 {
		o.drain = 2*o.interval + 2*time.Minute
	}
	if o.deadline <= 0 {
		o.deadline = o.interval
	}
	log.SetFlags(log.Ltime)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := o.main(ctx); err != nil {
		log.Fatal(err)
	}
}

func (o options) main(ctx context.Context) error {
	var names []string
	for _, name := range strings.Split(o.systems, ",") {
		if !strings.HasPrefix(name, "miniflux") || o.miniflux != "" {
			names = append(names, name)
		}
	}
	if o.together && o.pgPort == 0 {
		return fmt.Errorf("-together needs -pg-port: each system's Postgres CPU is counted on a cluster of its own")
	}
	// A cluster (and with -together a web) per system that runs at once.
	clusters, webs := 1, 1
	if o.together {
		clusters, webs = len(names), len(names)
		if o.sharedWeb {
			webs = 1
		}
	}
	admins := make([]string, clusters)
	for i := range admins {
		admins[i] = o.admin
		if o.pgPort == 0 {
			continue
		}
		dir := o.pgDir
		if i > 0 {
			dir = fmt.Sprintf("%s-%d", o.pgDir, i)
		}
		// As the machine's server: its settings beyond the defaults.
		pg, err := systems.StartPostgres(ctx, o.pgBin, dir, o.pgPort+i, append([]string{"autovacuum=off", "fsync=on"}, o.pgSet...)...)
		if err != nil {
			return err
		}
		defer pg.Stop()
		admins[i] = pg.Admin
	}
	p := newPlan(o)
	start := time.Now()
	history := p.history(start, o.history, max(o.feedItems, o.sitemap))
	ws := make([]*fakeweb.Web, webs)
	for i := range ws {
		w, err := fakeweb.New(o.n, o.port+i, fakeweb.Options{FeedItems: o.feedItems, SitemapItems: o.sitemap},
			history, func(i int) bool { return p.venue[i] })
		if err != nil {
			return err
		}
		defer w.Close()
		ws[i] = w
	}
	go p.run(ws[0], ws[1:]...)
	defer p.stop()
	load, _ := os.ReadFile("/proc/loadavg")
	where := "the machine's server"
	if o.pgPort != 0 {
		where = fmt.Sprintf("a cluster of the run's own on port %d", o.pgPort)
		if o.together {
			where = fmt.Sprintf("a cluster of each system's own on ports %d to %d", o.pgPort, o.pgPort+clusters-1)
		}
	}
	how := "one after the other"
	if o.together {
		how = "at the same time, windows aligned"
	}
	fmt.Printf("sites %d, interval %v, window %v (drain up to %v), on time: listed within %v; seed %d; systems %s; Postgres: %s; load at start %s",
		o.n, o.interval, o.window, o.drain, o.deadline, o.seed, how, where, load)
	fmt.Printf("publishing: %s\n", p.describe())
	results := make([]*result, len(names))
	if o.together {
		// Each system sets up at its own pace; the windows open together
		// once every one is ready.
		g, gctx := errgroup.WithContext(ctx)
		ready := newBarrier(gctx, len(names))
		for i, name := range names {
			g.Go(func() error {
				r, err := o.run(gctx, ws[min(i, len(ws)-1)], p, name, admins[i], ready.wait)
				if err != nil {
					return fmt.Errorf("%s: %w", name, err)
				}
				results[i] = r
				return nil
			})
		}
		if err := g.Wait(); err != nil {
			return err
		}
		for _, r := range results {
			r.print(o, p)
		}
	} else {
		for i, name := range names {
			r, err := o.run(ctx, ws[0], p, name, admins[0], func() error { return nil })
			if err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			r.print(o, p)
			results[i] = r
		}
	}
	summary(o, p, results)
	load, _ = os.ReadFile("/proc/loadavg")
	fmt.Printf("\nload at the end %s", load)
	return nil
}

// barrier lets n goroutines wait until all of them have arrived (or ctx
// ends, when one of them failed).
type barrier struct {
	ctx  context.Context
	mu   sync.Mutex
	left int
	all  chan struct{}
}

func newBarrier(ctx context.Context, n int) *barrier {
	return &barrier{ctx: ctx, left: n, all: make(chan struct{})}
}

func (b *barrier) wait() error {
	b.mu.Lock()
	b.left--
	if b.left == 0 {
		close(b.all)
	}
	b.mu.Unlock()
	select {
	case <-b.all:
		return nil
	case <-b.ctx.Done():
		return b.ctx.Err()
	}
}

// result is one system's run.
type result struct {
	system        string
	setup         time.Duration
	start, end    time.Time // the window
	drained       time.Time
	pubs          []publication
	obs           *observations
	measures      []string
	service       time.Duration
	pgLive, pgOut time.Duration
	web           fakeweb.Counts
	reads         int64
	rss           int64
}

func (r *result) cpu() time.Duration { return r.service + r.pgLive + r.pgOut }

// run measures one system: start it, attach every site, wait for the
// setup, open the observers, count a window's publications and the CPU
// in it, then wait for its publications to be delivered.
func (o options) run(ctx context.Context, w *fakeweb.Web, p *plan, name, admin string, ready func() error) (*result, error) {
	res := &result{system: name, obs: newObservations(w)}
	db := "bench_freshness_" + strings.ReplaceAll(name, "-", "_")
	if err := systems.Recreate(ctx, admin, db); err != nil {
		return nil, err
	}
	dsn := systems.DSNOf(admin, db)
	port, err := systems.FreePort()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var sys *systems.System
	var observe func() error
	setup := systems.SetupOptions{Attachers: o.attachers, Settle: o.settle}
	switch name {
	case "feedsvc":
		env := append([]string{"FEEDSVC_POLL_INTERVAL=" + o.interval.String()}, o.feedsvcEnv...)
		f, err := systems.StartFeedsvc(ctx, name, db, systems.FeedsvcOptions{Bin: o.feedsvc, DSN: dsn, Port: port, Env: env, PerFeed: o.perFeed})
		if err != nil {
			return nil, err
		}
		sys = f.System
		defer sys.Stop()
		venues, err := o.eventFeeds(ctx, f, w, res.obs)
		if err != nil {
			return nil, err
		}
		setup.Backfills = o.n + venues
		observe = func() error { return o.observeFeedsvc(ctx, f, res.obs) }
		res.measures = []string{stored, listed, stream, webhook}
	case "miniflux", "miniflux-ef":
		env := []string{"POLLING_FREQUENCY=1", "BATCH_SIZE=" + strconv.Itoa(o.n)}
		if name == "miniflux" {
			env = append(env, "POLLING_SCHEDULER=round_robin", "SCHEDULER_ROUND_ROBIN_MIN_INTERVAL="+strconv.Itoa(max(1, int(o.interval/time.Minute))))
		} else {
			env = append(env, "POLLING_SCHEDULER=entry_frequency")
		}
		m, err := systems.StartMiniflux(ctx, name, db, systems.MinifluxOptions{Bin: o.miniflux, DSN: dsn, Port: port, Env: env})
		if err != nil {
			return nil, err
		}
		sys = m.System
		defer sys.Stop()
		observe = func() error { return minifluxEntries(ctx, m.API, o.listPoll, res.obs) }
		res.measures = []string{stored, listed}
	default:
		return nil, fmt.Errorf("unknown system %q", name)
	}

	sampler, err := systems.NewScheduleSampler(ctx, dsn, sys.Table)
	if err != nil {
		return nil, err
	}
	defer sampler.Close()
	if res.setup, err = sys.Setup(ctx, w.Hosts(), sampler, setup); err != nil {
		return nil, err
	}
	if err := observe(); err != nil {
		return nil, err
	}
	if err := ready(); err != nil {
		return nil, err
	}

	cpu, err := systems.NewBackendCPU(ctx, admin, db)
	if err != nil {
		return nil, err
	}
	defer cpu.Close()
	for _, pid := range sampler.Pids {
		cpu.Exclude[pid] = true
	}
	meter, err := sys.StartMeter(ctx, cpu, 500*time.Millisecond)
	if err != nil {
		return nil, err
	}
	web0, reads0 := w.Counts(), res.obs.reads.Load()
	res.start = time.Now()
	log.Printf("%s: window of %v from %s", name, o.window, res.start.Format("15:04:05"))
	for left := o.window; left > 0 && err == nil; left -= 5 * time.Minute {
		if err = systems.Sleep(ctx, min(left, 5*time.Minute)); err == nil && left > 5*time.Minute {
			log.Printf("%s: %v of the window, %d publications", name, time.Since(res.start).Round(time.Second), len(p.between(res.start, time.Now())))
		}
	}
	use, stopErr := meter.Stop(ctx)
	if err != nil {
		return nil, err
	}
	if stopErr != nil {
		return nil, stopErr
	}
	res.end = time.Now()
	res.service, res.pgLive, res.pgOut, res.rss = use.Service, use.PGLive, use.PGExited, use.PeakRSS
	res.web = w.Counts().Minus(web0)
	res.reads = res.obs.reads.Load() - reads0
	res.pubs = p.between(res.start, res.end)

	log.Printf("%s: window done, %d publications; waiting up to %v for their delivery", name, len(res.pubs), o.drain)
	deadline := time.Now().Add(o.drain)
	for time.Now().Before(deadline) && res.pending(p) > 0 {
		if err := systems.Sleep(ctx, 5*time.Second); err != nil {
			return nil, err
		}
	}
	res.drained = time.Now()
	if n := res.pending(p); n > 0 {
		log.Printf("%s: %d deliveries still missing after the drain", name, n)
	}
	return res, nil
}

// pending counts the window's publications some measure has not seen
// yet (the webhook only for venues).
func (r *result) pending(p *plan) int {
	n := 0
	for _, pub := range r.pubs {
		for _, m := range r.measures {
			if m == webhook && !p.venue[pub.site] {
				continue
			}
			if _, ok := r.obs.at(m, key{pub.site, pub.k}); !ok {
				n++
			}
		}
	}
	return n
}

// eventFeeds makes feedsvc's event feeds for the venues (attached, with
// their news feed, by the setup) and a webhook for all of them, whose
// receiver records into obs; it returns how many venues there are.
func (o options) eventFeeds(ctx context.Context, f *systems.Feedsvc, w *fakeweb.Web, obs *observations) (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	var hook struct {
		Data struct {
			Secret string `json:"secret"`
		} `json:"data"`
	}
	if err := f.API.Do(ctx, "POST", "/webhooks", map[string]any{"url": "http://" + ln.Addr().String() + "/hooks", "events": []string{"event.item_added"}}, &hook); err != nil {
		ln.Close()
		return 0, fmt.Errorf("create the webhook: %w", err)
	}
	srv := &http.Server{Handler: webhookReceiver(hook.Data.Secret, obs), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	go func() { <-ctx.Done(); _ = srv.Close() }()

	venue := map[string]bool{}
	for _, s := range w.Sites {
		if s.Venue {
			venue[s.Host] = true
		}
	}
	var mu sync.Mutex
	var feeds []string
	count := 0
	f.Attach = func(ctx context.Context, host string) error {
		_, source, err := f.AttachSite(ctx, host)
		if err != nil || !venue[host] {
			return err
		}
		mu.Lock()
		i := count / o.perFeed
		count++
		if i == len(feeds) {
			var feed struct {
				Data struct {
					ID string `json:"id"`
				} `json:"data"`
			}
			if err := f.API.Do(ctx, "POST", "/feeds/events", map[string]any{"name": fmt.Sprintf("venues %d", i), "description": "benchmark"}, &feed); err != nil {
				mu.Unlock()
				return err
			}
			feeds = append(feeds, feed.Data.ID)
		}
		feed := feeds[i]
		mu.Unlock()
		return f.API.Do(ctx, "POST", "/feeds/events/"+feed+"/sources", map[string]any{"sourceType": "site", "sourceId": source}, nil)
	}
	return len(venue), nil
}

// observeFeedsvc opens a live stream on every news feed (a key per five
// streams: FEEDSVC_STREAMS_PER_KEY) and polls every list with its cursor.
func (o options) observeFeedsvc(ctx context.Context, f *systems.Feedsvc, obs *observations) error {
	feeds := f.Feeds()
	var key string
	for i, feed := range feeds {
		if i%5 == 0 {
			k, err := f.NewKey(ctx)
			if err != nil {
				return err
			}
			key = k
		}
		go feedsvcStream(ctx, f.API.Base, key, feed, obs)
	}
	return feedsvcLists(ctx, f.API, feeds, o.listPoll, obs)
}
