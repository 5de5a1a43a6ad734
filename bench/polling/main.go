// Command polling measures how many sources one crawler keeps fresh: a
// fake web of n sites on loopback (bench/internal/fakeweb), each attached through the API
// of `feedsvc serve` (as a site source) and, in the same run, of Miniflux
// (as a feed, with its own scheduler), both polling every interval. For
// each it reports polls per second, CPU per poll of the service and of its
// database's Postgres backends (unchanged polls, then with a share of the
// sites publishing each round), the lag between a source's due time and
// its poll (p50/p99), and the service's peak memory. See bench/polling/README.md.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/feedsvc/feedsvc/bench/internal/fakeweb"
	"github.com/feedsvc/feedsvc/bench/internal/systems"
)

type options struct {
	feedsvc, miniflux string
	n                 int
	interval, window  time.Duration
	share             float64
	admin             string
	port              int
	concurrency       int
	systems           string
	crawlers          int
	phases            string
	curve             bool
	attachers         int
	settle            time.Duration
}

func main() {
	var o options
	flag.StringVar(&o.feedsvc, "feedsvc", "", "feedsvc binary")
	flag.StringVar(&o.miniflux, "miniflux", "", "miniflux binary (built from its source); empty skips it")
	flag.IntVar(&o.n, "n", 2000, "sites (sources)")
	flag.DurationVar(&o.interval, "interval", 2*time.Minute, "poll interval of every source, both systems (whole minutes for Miniflux)")
	flag.DurationVar(&o.window, "window", 0, "length of each measured phase (default: one interval)")
	flag.Float64Var(&o.share, "share", 0.1, "share of the sites publishing an article each interval in the changed phase")
	flag.StringVar(&o.admin, "db", "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable", "admin DSN of the Postgres server")
	flag.IntVar(&o.port, "port", 18480, "port of every fake site")
	flag.IntVar(&o.concurrency, "concurrency", 16, "sources polled at once (FEEDSVC_CRAWL_CONCURRENCY, Miniflux WORKER_POOL_SIZE)")
	flag.StringVar(&o.systems, "systems", "feedsvc,miniflux", "which to run, in order")
	flag.IntVar(&o.crawlers, "crawlers", 0, "feedsvc: 0 runs one `serve` with every role; n > 0 runs one with the api, projections and webhooks roles and n with the crawler role alone, on one database")
	flag.StringVar(&o.phases, "phases", "unchanged,changed", "which windows to measure")
	flag.BoolVar(&o.curve, "curve", false, "feedsvc with -crawlers n: start with one crawler process and measure an unchanged window with each of 1..n")
	flag.IntVar(&o.attachers, "attachers", 8, "attach requests at once during the setup")
	flag.DurationVar(&o.settle, "settle", 10*time.Second, "wait after the setup (first polls, backfills) before measuring, for its item appends and projections to end")
	flag.Parse()
	if o.window <= 0 {
		o.window = o.interval
	}
	log.SetFlags(log.Ltime)
	hourOld := func(int) []time.Time { return []time.Time{time.Now().Add(-time.Hour)} }
	w, err := fakeweb.New(o.n, o.port, fakeweb.Options{}, hourOld, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer w.Close()
	load, _ := os.ReadFile("/proc/loadavg")
	fmt.Printf("sites %d, interval %v, window %v, change share %.2f, concurrency %d, crawler processes %d, load at start %s", o.n, o.interval, o.window, o.share, o.concurrency, o.crawlers, load)
	var results []result
	for _, sys := range strings.Split(o.systems, ",") {
		if sys == "miniflux" && o.miniflux == "" {
			continue
		}
		r, err := o.measure(context.Background(), w, sys)
		if err != nil {
			log.Fatalf("%s: %v", sys, err)
		}
		r.print()
		results = append(results, r)
	}
	if len(results) == 2 && results[0].unchanged.dur > 0 && results[1].unchanged.dur > 0 {
		a, b := results[0], results[1]
		fmt.Printf("\nratio %s/%s: polls per CPU-second (service + Postgres), unchanged %.2f, changed %.2f\n", a.system, b.system,
			a.unchanged.pollsPerCPUSecond()/b.unchanged.pollsPerCPUSecond(), a.changed.pollsPerCPUSecond()/b.changed.pollsPerCPUSecond())
	}
}

// phase is one measured window.
type phase struct {
	polls       int
	dur         time.Duration
	service, pg time.Duration
	// With crawler processes of their own (-crawlers): the part of
	// service and pg that is theirs (the rest is the other roles').
	crawlService, crawlPG time.Duration
	lags                  []time.Duration
	web                   fakeweb.Counts
	published             int
	transactions          int64
	rss                   int64
}

func (p phase) pollsPerCPUSecond() float64 {
	return float64(p.polls) / (p.service + p.pg).Seconds()
}

func (p phase) quantile(q float64) time.Duration {
	if len(p.lags) == 0 {
		return 0
	}
	l := slices.Clone(p.lags)
	slices.Sort(l)
	return l[min(len(l)-1, int(q*float64(len(l))))]
}

type result struct {
	system             string
	setup              time.Duration
	unchanged, changed phase
	// curve: with -curve, an unchanged window with 1, 2, … crawler
	// processes.
	curve []phase
	rss   int64
}

func (r result) print() {
	fmt.Printf("\n%s (setup: attach and first poll of every source %v; peak RSS %d MiB)\n", r.system, r.setup.Round(time.Second), r.rss>>20)
	type named struct {
		name string
		ph   phase
	}
	phases := []named{{"unchanged", r.unchanged}, {"changed", r.changed}}
	if len(r.curve) > 0 {
		phases = nil
		for i, ph := range r.curve {
			phases = append(phases, named{fmt.Sprintf("%d crawler", i+1), ph})
		}
	}
	for _, p := range phases {
		if p.ph.dur == 0 {
			continue
		}
		ph := p.ph
		n := float64(max(ph.polls, 1))
		fmt.Printf("  %-9s polls %d in %v = %.1f/s; CPU/poll service %.2f ms + Postgres %.2f ms; %.1f polls per CPU-second; lag p50 %v p99 %v max %v; transactions/poll %.1f; published %d\n",
			p.name, ph.polls, ph.dur.Round(time.Second), float64(ph.polls)/ph.dur.Seconds(), ms(ph.service)/n, ms(ph.pg)/n, ph.pollsPerCPUSecond(),
			ph.quantile(0.5).Round(time.Millisecond), ph.quantile(0.99).Round(time.Millisecond), ph.quantile(1).Round(time.Millisecond),
			float64(ph.transactions)/n, ph.published)
		if ph.crawlService > 0 {
			fmt.Printf("            of which crawler processes %.2f ms + their Postgres backends %.2f ms (%.1f polls per CPU-second); other roles %.2f + %.2f ms\n",
				ms(ph.crawlService)/n, ms(ph.crawlPG)/n, float64(ph.polls)/(ph.crawlService+ph.crawlPG).Seconds(),
				ms(ph.service-ph.crawlService)/n, ms(ph.pg-ph.crawlPG)/n)
		}
		fmt.Printf("            at the web: %s\n", ph.web)
	}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func (o options) measure(ctx context.Context, w *fakeweb.Web, name string) (result, error) {
	res := result{system: name}
	dbName := "bench_polling_" + name
	if err := systems.Recreate(ctx, o.admin, dbName); err != nil {
		return res, err
	}
	dsn := systems.DSNOf(o.admin, dbName)
	apiPort, err := systems.FreePort()
	if err != nil {
		return res, err
	}
	var sys *systems.System
	switch name {
	case "feedsvc":
		start := o.crawlers
		if o.curve {
			start = min(start, 1)
		}
		f, err := systems.StartFeedsvc(ctx, name, dbName, systems.FeedsvcOptions{Bin: o.feedsvc, DSN: dsn, Port: apiPort, Crawlers: start,
			// Every source at the one interval, however busy (Miniflux's
			// round robin): FEEDSVC_MIN_POLL_INTERVAL would check a busy
			// one sooner (a build without it ignores it).
			Env: []string{"FEEDSVC_POLL_INTERVAL=" + o.interval.String(), "FEEDSVC_MIN_POLL_INTERVAL=" + o.interval.String(),
				"FEEDSVC_MAX_POLL_INTERVAL=" + o.interval.String(),
				"FEEDSVC_CRAWL_CONCURRENCY=" + strconv.Itoa(o.concurrency), "FEEDSVC_RATE_LIMIT=unlimited"}})
		if err != nil {
			return res, err
		}
		sys = f.System
	case "miniflux":
		minutes := max(1, int(o.interval/time.Minute))
		m, err := systems.StartMiniflux(ctx, name, dbName, systems.MinifluxOptions{Bin: o.miniflux, DSN: dsn, Port: apiPort,
			Env: []string{"POLLING_FREQUENCY=1", "POLLING_SCHEDULER=round_robin", "SCHEDULER_ROUND_ROBIN_MIN_INTERVAL=" + strconv.Itoa(minutes),
				"BATCH_SIZE=" + strconv.Itoa(o.n), "WORKER_POOL_SIZE=" + strconv.Itoa(o.concurrency)}})
		if err != nil {
			return res, err
		}
		sys = m.System
	default:
		return res, fmt.Errorf("unknown system %q", name)
	}
	defer sys.Stop()

	sampler, err := systems.NewScheduleSampler(ctx, dsn, sys.Table)
	if err != nil {
		return res, err
	}
	defer sampler.Close()
	if res.setup, err = sys.Setup(ctx, w.Hosts(), sampler, systems.SetupOptions{Attachers: o.attachers, Settle: o.settle}); err != nil {
		return res, err
	}

	cpu, err := systems.NewBackendCPU(ctx, o.admin, dbName)
	if err != nil {
		return res, err
	}
	defer cpu.Close()
	for _, pid := range sampler.Pids {
		cpu.Exclude[pid] = true
	}
	if o.curve && name == "feedsvc" && o.crawlers > 0 {
		for k := 1; k <= o.crawlers; k++ {
			if k > len(sys.Crawlers) {
				if err := sys.AddCrawler(); err != nil {
					return res, err
				}
				time.Sleep(10 * time.Second)
			}
			log.Printf("%s: measuring %v with %d crawler processes", name, o.window, k)
			ph, err := o.runPhase(ctx, w, sys, sampler, cpu, 0)
			if err != nil {
				return res, err
			}
			res.curve = append(res.curve, ph)
			res.rss = max(res.rss, ph.rss)
		}
		return res, nil
	}
	for i, ph := range []*phase{&res.unchanged, &res.changed} {
		share := 0.0
		if i == 1 {
			share = o.share
		}
		if !slices.Contains(strings.Split(o.phases, ","), []string{"unchanged", "changed"}[i]) {
			continue
		}
		log.Printf("%s: measuring %v with change share %.2f", name, o.window, share)
		*ph, err = o.runPhase(ctx, w, sys, sampler, cpu, share)
		if err != nil {
			return res, err
		}
		res.rss = max(res.rss, ph.rss)
	}
	return res, nil
}

// publish adds an article, dated now, to every step-th site starting at
// offset round.
func publish(w *fakeweb.Web, share float64, round int) int {
	if share <= 0 {
		return 0
	}
	step := max(1, int(1/share))
	n := 0
	for i := round % step; i < len(w.Sites); i += step {
		w.Sites[i].Publish()
		n++
	}
	return n
}

// runPhase measures one window: publishing share of the sites every
// interval (spread over it in tenths), counting polls and their lag from
// the schedule, and CPU.
func (o options) runPhase(ctx context.Context, w *fakeweb.Web, sys *systems.System, sampler *systems.ScheduleSampler, cpu *systems.BackendCPU, share float64) (phase, error) {
	var ph phase
	meter, err := sys.StartMeter(ctx, cpu, 200*time.Millisecond)
	if err != nil {
		return ph, err
	}
	tx0, err := cpu.Transactions(ctx)
	if err != nil {
		return ph, err
	}
	web0 := w.Counts()
	sampler.StartWindow()
	start := time.Now()
	tick := o.interval / 10
	round := 0
	for time.Since(start) < o.window {
		ph.published += publish(w, share/10, round)
		round++
		time.Sleep(min(tick, o.window-time.Since(start)))
		if err := sampler.Sample(ctx); err != nil {
			_, _ = meter.Stop(ctx)
			return ph, err
		}
	}
	use, err := meter.Stop(ctx)
	if err != nil {
		return ph, err
	}
	ph.dur = time.Since(start)
	ph.service, ph.crawlService = use.Service, use.Crawlers
	ph.pg, ph.crawlPG, ph.rss = use.PG(), use.PGCrawlers, use.PeakRSS
	ph.web = w.Counts().Minus(web0)
	// A poll is a request for a site's feed, which both systems make once
	// per poll (the schedule's changes, which the lags come from, can
	// count a row touched without a request).
	_, ph.lags = sampler.EndWindow()
	ph.polls = int(ph.web.FeedFull + ph.web.Feed304)
	time.Sleep(1500 * time.Millisecond)
	tx1, err := cpu.Transactions(ctx)
	if err != nil {
		return ph, err
	}
	ph.transactions = tx1 - tx0
	return ph, nil
}
