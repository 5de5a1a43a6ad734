// Command polling measures how many sources one crawler keeps fresh: a
// fake web of n sites on loopback (web.go), each attached through the API
// of `feedsvc serve` (as a site source) and, in the same run, of Miniflux
// (as a feed, with its own scheduler), both polling every interval. For
// each it reports polls per second, CPU per poll of the service and of its
// database's Postgres backends (unchanged polls, then with a share of the
// sites publishing each round), the lag between a source's due time and
// its poll (p50/p99), and the service's peak memory. See bench/README.md,
// section 22.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/prometheus/procfs"
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
	w, err := newWeb(o.n, o.port)
	if err != nil {
		log.Fatal(err)
	}
	defer w.close()
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
	web                   webCounts
	published             int
	transactions          int64
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
		fmt.Printf("            at the web: feed %d full + %d 304, sitemap %d full + %d 304, articles %d, other %d\n",
			ph.web.FeedFull, ph.web.Feed304, ph.web.SitemapFull, ph.web.Sitemap304, ph.web.Articles, ph.web.Other)
	}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// system is a running service under measurement.
type system struct {
	cmd *exec.Cmd
	// crawlers are the crawler-only processes (-crawlers), beside cmd.
	crawlers []*exec.Cmd
	out      bytes.Buffer
	db       string
	table    string // the schedule: id, last poll, next due
	// backfills, when set, counts the attachments whose backfill is
	// done: the setup waits for all of them, so that no measured window
	// holds the tail of the setup's backfills.
	backfills string
	// flush ends the attaching, for a system that attaches in batches.
	flush func(context.Context) error
	// addCrawler starts one more crawler-only process (-crawlers).
	addCrawler func() error
}

func (s *system) pids() []int {
	out := []int{s.cmd.Process.Pid}
	for _, c := range s.crawlers {
		out = append(out, c.Process.Pid)
	}
	return out
}

func (s *system) crawlerPids() []int {
	var out []int
	for _, c := range s.crawlers {
		out = append(out, c.Process.Pid)
	}
	return out
}

// cpu is the CPU time of every process of the system so far, and of its
// crawler-only processes.
func (s *system) cpu(fs procfs.FS) (all, crawlers time.Duration, err error) {
	for i, pid := range s.pids() {
		d, err := cpuOf(fs, pid)
		if err != nil {
			return 0, 0, err
		}
		all += d
		if i > 0 {
			crawlers += d
		}
	}
	return all, crawlers, nil
}

func (o options) measure(ctx context.Context, w *web, name string) (result, error) {
	res := result{system: name}
	dbName := "bench_polling_" + name
	if err := recreate(ctx, o.admin, dbName); err != nil {
		return res, err
	}
	dsn := strings.Replace(o.admin, "/postgres?", "/"+dbName+"?", 1)
	apiPort, err := freePort()
	if err != nil {
		return res, err
	}
	var sys *system
	var attach func(ctx context.Context, host string) error
	switch name {
	case "feedsvc":
		sys, attach, err = o.startFeedsvc(ctx, dsn, apiPort)
	case "miniflux":
		sys, attach, err = o.startMiniflux(ctx, dsn, apiPort)
	default:
		return res, fmt.Errorf("unknown system %q", name)
	}
	if err != nil {
		return res, err
	}
	sys.db = dbName
	defer func() {
		for _, cmd := range append([]*exec.Cmd{sys.cmd}, sys.crawlers...) {
			_ = cmd.Process.Signal(os.Interrupt)
			done := make(chan struct{})
			go func() { _ = cmd.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(20 * time.Second):
				_ = cmd.Process.Kill()
				<-done
			}
		}
	}()

	sampler, err := newScheduleSampler(ctx, dsn, sys.table)
	if err != nil {
		return res, err
	}
	defer sampler.close()
	start := time.Now()
	log.Printf("%s: attaching %d sources", name, o.n)
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, o.attachers+1)
	for range o.attachers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= len(w.sites) {
					return
				}
				if err := attach(ctx, w.sites[i].host); err != nil {
					errs <- fmt.Errorf("attach %s: %w", w.sites[i].host, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if sys.flush != nil {
		if err := sys.flush(ctx); err != nil {
			errs <- fmt.Errorf("attach: %w", err)
		}
	}
	select {
	case err := <-errs:
		return res, fmt.Errorf("%w\n%s", err, tail(sys.out.String()))
	default:
	}
	log.Printf("%s: attached in %v; waiting for every source's first poll", name, time.Since(start).Round(time.Second))
	for {
		polled, err := sampler.polledOnce(ctx)
		if err != nil {
			return res, err
		}
		if polled >= o.n {
			break
		}
		if time.Since(start) > 30*time.Minute {
			return res, fmt.Errorf("only %d of %d sources polled after 30 min\n%s", polled, o.n, tail(sys.out.String()))
		}
		time.Sleep(2 * time.Second)
	}
	res.setup = time.Since(start)
	log.Printf("%s: every source polled once after %v", name, res.setup.Round(time.Second))
	if sys.backfills != "" {
		if err := waitCount(ctx, dsn, sys.backfills, o.n, 30*time.Minute); err != nil {
			return res, fmt.Errorf("backfills: %w\n%s", err, tail(sys.out.String()))
		}
		log.Printf("%s: every backfill done after %v", name, time.Since(start).Round(time.Second))
	}
	// What autovacuum would have done by now (it is off on the machine's
	// shared server): without statistics the planner guesses, and dead row
	// versions of the setup's polls slow every scan of the schedule.
	if err := vacuumAnalyze(ctx, dsn); err != nil {
		return res, err
	}
	// Let the first polls' work (item appends, projections) settle: at
	// 10,000 sources the projectors are still catching up with the
	// setup's events for a while after its last poll.
	log.Printf("%s: settling for %v", name, o.settle)
	time.Sleep(o.settle)

	cpu, err := newBackendCPU(ctx, o.admin, dbName)
	if err != nil {
		return res, err
	}
	defer cpu.close()
	for _, pid := range sampler.pids {
		cpu.exclude[pid] = true
	}
	fs, _ := procfs.NewDefaultFS()
	var peak atomic.Int64
	rssCtx, stopRSS := context.WithCancel(ctx)
	defer stopRSS()
	go func() {
		for rssCtx.Err() == nil {
			var rss int64
			for _, pid := range sys.pids() {
				if p, err := fs.Proc(pid); err == nil {
					if st, err := p.Stat(); err == nil {
						rss += int64(st.ResidentMemory())
					}
				}
			}
			if rss > peak.Load() {
				peak.Store(rss)
			}
			time.Sleep(time.Second)
		}
	}()
	if o.curve && name == "feedsvc" && o.crawlers > 0 {
		for k := 1; k <= o.crawlers; k++ {
			if k > len(sys.crawlers) {
				if err := sys.addCrawler(); err != nil {
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
		}
		res.rss = peak.Load()
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
	}
	res.rss = peak.Load()
	return res, nil
}

// runPhase measures one window: publishing share of the sites every
// interval (spread over it in tenths), counting polls and their lag from
// the schedule, and CPU.
func (o options) runPhase(ctx context.Context, w *web, sys *system, sampler *scheduleSampler, cpu *backendCPU, share float64) (phase, error) {
	var ph phase
	fs, err := procfs.NewDefaultFS()
	if err != nil {
		return ph, err
	}
	cpu.reset()
	if err := cpu.sample(ctx); err != nil {
		return ph, err
	}
	tx0, err := cpu.transactions(ctx)
	if err != nil {
		return ph, err
	}
	svc0, crawl0, err := sys.cpu(fs)
	if err != nil {
		return ph, err
	}
	web0 := w.counts()
	sampler.startWindow()
	// The sampling stops between samples, not by cancelling one: pgx
	// closes a connection whose query is cancelled.
	var halt atomic.Bool
	sampling := make(chan struct{})
	go func() {
		defer close(sampling)
		for !halt.Load() {
			_ = cpu.sample(ctx)
			time.Sleep(200 * time.Millisecond)
		}
	}()
	stop := func() { halt.Store(true); <-sampling }
	start := time.Now()
	tick := o.interval / 10
	round := 0
	for time.Since(start) < o.window {
		ph.published += w.publish(share/10, round)
		round++
		time.Sleep(min(tick, o.window-time.Since(start)))
		if err := sampler.sample(ctx); err != nil {
			stop()
			return ph, err
		}
	}
	stop()
	stop = func() {}
	ph.dur = time.Since(start)
	svc1, crawl1, err := sys.cpu(fs)
	if err != nil {
		return ph, err
	}
	_ = cpu.sample(ctx)
	ph.service, ph.crawlService = svc1-svc0, crawl1-crawl0
	ph.pg, _ = cpu.total()
	if len(sys.crawlers) > 0 {
		ph.crawlPG = cpu.totalOf(sys.crawlerPids())
	}
	ph.web = w.counts().minus(web0)
	// A poll is a request for a site's feed, which both systems make once
	// per poll (the schedule's changes, which the lags come from, can
	// count a row touched without a request).
	_, ph.lags = sampler.endWindow()
	ph.polls = int(ph.web.FeedFull + ph.web.Feed304)
	time.Sleep(1500 * time.Millisecond)
	tx1, err := cpu.transactions(ctx)
	if err != nil {
		return ph, err
	}
	ph.transactions = tx1 - tx0
	return ph, nil
}

// scheduleSampler reads a system's schedule table (id, when the last poll
// ended, when the next is due) and sees each poll as a change of the
// first: its lag is that time minus the due time the row held before.
// Its own backend is left out of the Postgres CPU.
type scheduleSampler struct {
	conn  *pgx.Conn
	query string
	pids  []int32
	prev  map[string][2]time.Time
	// in the window:
	polls int
	lags  []time.Duration
	on    bool
}

func newScheduleSampler(ctx context.Context, dsn, query string) (*scheduleSampler, error) {
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return nil, fmt.Errorf("connect the sampler: %w", err)
	}
	var pid int32
	if err := conn.QueryRow(ctx, `SELECT pg_backend_pid()`).Scan(&pid); err != nil {
		return nil, err
	}
	return &scheduleSampler{conn: conn, query: query, pids: []int32{pid}, prev: map[string][2]time.Time{}}, nil
}

func (s *scheduleSampler) close() { _ = s.conn.Close(context.Background()) }

func (s *scheduleSampler) polledOnce(ctx context.Context) (int, error) {
	if err := s.sample(ctx); err != nil {
		return 0, err
	}
	n := 0
	for _, v := range s.prev {
		if !v[0].IsZero() {
			n++
		}
	}
	return n, nil
}

func (s *scheduleSampler) startWindow() { s.polls, s.lags, s.on = 0, nil, true }

func (s *scheduleSampler) endWindow() (int, []time.Duration) {
	s.on = false
	return s.polls, s.lags
}

func (s *scheduleSampler) sample(ctx context.Context) error {
	rows, err := s.conn.Query(ctx, s.query)
	if err != nil {
		return fmt.Errorf("read the schedule: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		var last, next *time.Time
		if err := rows.Scan(&id, &last, &next); err != nil {
			return err
		}
		var cur [2]time.Time
		if last != nil {
			cur[0] = *last
		}
		if next != nil {
			cur[1] = *next
		}
		p, seen := s.prev[id]
		if seen && s.on && !cur[0].Equal(p[0]) && !p[0].IsZero() {
			s.polls++
			s.lags = append(s.lags, cur[0].Sub(p[1]))
		}
		s.prev[id] = cur
	}
	return rows.Err()
}

func recreate(ctx context.Context, admin, db string) error {
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `DROP DATABASE IF EXISTS `+pgx.Identifier{db}.Sanitize()+` WITH (FORCE)`); err != nil {
		return fmt.Errorf("drop %s: %w", db, err)
	}
	if _, err := conn.Exec(ctx, `CREATE DATABASE `+pgx.Identifier{db}.Sanitize()); err != nil {
		return fmt.Errorf("create %s: %w", db, err)
	}
	return nil
}

// waitCount waits until query counts at least n, for at most limit.
func waitCount(ctx context.Context, dsn, query string, n int, limit time.Duration) error {
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return fmt.Errorf("connect to count: %w", err)
	}
	defer conn.Close(ctx)
	deadline := time.Now().Add(limit)
	for {
		var got int
		if err := conn.QueryRow(ctx, query).Scan(&got); err != nil {
			return fmt.Errorf("count: %w", err)
		}
		if got >= n {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d of %d after %v", got, n, limit)
		}
		time.Sleep(2 * time.Second)
	}
}

func vacuumAnalyze(ctx context.Context, dsn string) error {
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return fmt.Errorf("connect to vacuum: %w", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `VACUUM ANALYZE`); err != nil {
		return fmt.Errorf("vacuum analyze: %w", err)
	}
	return nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func tail(s string) string {
	if len(s) > 4000 {
		return s[len(s)-4000:]
	}
	return s
}

func (o options) startFeedsvc(ctx context.Context, dsn string, port int) (*system, func(context.Context, string) error, error) {
	env := append(os.Environ(), "DATABASE_URL="+dsn, "FEEDSVC_ADDR=127.0.0.1:"+strconv.Itoa(port), "FEEDSVC_ALLOW_PRIVATE_NETWORKS=true",
		// Every source at the one interval, however busy (Miniflux's
		// round robin): FEEDSVC_MIN_POLL_INTERVAL would check a busy one
		// sooner.
		"FEEDSVC_POLL_INTERVAL="+o.interval.String(), "FEEDSVC_MIN_POLL_INTERVAL="+o.interval.String(),
		"FEEDSVC_MAX_POLL_INTERVAL="+o.interval.String(),
		"FEEDSVC_CRAWL_CONCURRENCY="+strconv.Itoa(o.concurrency), "FEEDSVC_LOG_LEVEL=warn", "FEEDSVC_RATE_LIMIT=unlimited")
	run := func(args ...string) (string, error) {
		cmd := exec.CommandContext(ctx, o.feedsvc, args...)
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := run("migrate"); err != nil {
		return nil, nil, fmt.Errorf("migrate: %w\n%s", err, out)
	}
	out, err := run("keys", "create", "--org", "bench")
	if err != nil {
		return nil, nil, fmt.Errorf("keys create: %w\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	key := strings.TrimSpace(lines[len(lines)-1])
	sys := &system{table: `SELECT source_id::text, last_crawl_at, next_at FROM crawl_state`,
		backfills: `SELECT count(*) FROM ingest_backfills WHERE done_at IS NOT NULL`}
	sys.cmd = exec.Command(o.feedsvc, "serve")
	sys.cmd.Env = env
	if o.crawlers > 0 {
		sys.cmd.Env = append(env, "FEEDSVC_ROLES=api,projections,webhooks")
	}
	sys.cmd.Stdout, sys.cmd.Stderr = &lockedWriter{w: &sys.out}, &lockedWriter{w: &sys.out}
	if err := sys.cmd.Start(); err != nil {
		return nil, nil, err
	}
	sys.addCrawler = func() error {
		free, err := freePort()
		if err != nil {
			return err
		}
		cmd := exec.Command(o.feedsvc, "serve")
		cmd.Env = append(env, "FEEDSVC_ROLES=crawler", "FEEDSVC_ADDR=127.0.0.1:"+strconv.Itoa(free))
		cmd.Stdout, cmd.Stderr = &lockedWriter{w: &sys.out}, &lockedWriter{w: &sys.out}
		if err := cmd.Start(); err != nil {
			return fmt.Errorf("crawler process %d: %w", len(sys.crawlers)+1, err)
		}
		sys.crawlers = append(sys.crawlers, cmd)
		return nil
	}
	start := o.crawlers
	if o.curve {
		start = min(start, 1)
	}
	for range start {
		if err := sys.addCrawler(); err != nil {
			return sys, nil, err
		}
	}
	api := &apiClient{base: "http://127.0.0.1:" + strconv.Itoa(port), header: map[string]string{"Authorization": "Bearer " + key}}
	if err := api.waitReady(ctx, "/readyz"); err != nil {
		return sys, nil, fmt.Errorf("%w\n%s", err, tail(sys.out.String()))
	}
	// One feed per 500 sources.
	var mu sync.Mutex
	feeds := map[int]string{}
	var count atomic.Int64
	attach := func(ctx context.Context, host string) error {
		i := int(count.Add(1)-1) / 500
		mu.Lock()
		feed, ok := feeds[i]
		if !ok {
			var f struct {
				Data struct {
					ID string `json:"id"`
				} `json:"data"`
			}
			if err := api.do(ctx, "POST", "/feeds/news", map[string]any{"name": fmt.Sprintf("bench %d", i), "description": "polling bench"}, &f); err != nil {
				mu.Unlock()
				return err
			}
			feed, feeds[i] = f.Data.ID, f.Data.ID
		}
		mu.Unlock()
		return api.do(ctx, "POST", "/feeds/news/"+feed+"/sources", map[string]any{"sourceType": "site", "domain": host}, nil)
	}
	return sys, attach, nil
}

func (o options) startMiniflux(ctx context.Context, dsn string, port int) (*system, func(context.Context, string) error, error) {
	minutes := max(1, int(o.interval/time.Minute))
	env := append(os.Environ(), "DATABASE_URL="+dsn, "RUN_MIGRATIONS=1", "CREATE_ADMIN=1", "ADMIN_USERNAME=bench", "ADMIN_PASSWORD=bench-password",
		"LISTEN_ADDR=127.0.0.1:"+strconv.Itoa(port), "POLLING_FREQUENCY=1", "POLLING_SCHEDULER=round_robin",
		"SCHEDULER_ROUND_ROBIN_MIN_INTERVAL="+strconv.Itoa(minutes), "BATCH_SIZE="+strconv.Itoa(o.n),
		"WORKER_POOL_SIZE="+strconv.Itoa(o.concurrency), "FETCHER_ALLOW_PRIVATE_NETWORKS=1", "LOG_LEVEL=warning")
	// A feed counts as polled once it has an ETag (imported feeds are
	// created with checked_at = now()).
	sys := &system{table: `SELECT id::text, CASE WHEN etag_header <> '' THEN checked_at END, next_check_at FROM feeds`}
	sys.cmd = exec.Command(o.miniflux)
	sys.cmd.Env = env
	sys.cmd.Stdout, sys.cmd.Stderr = &lockedWriter{w: &sys.out}, &lockedWriter{w: &sys.out}
	if err := sys.cmd.Start(); err != nil {
		return nil, nil, err
	}
	api := &apiClient{base: "http://127.0.0.1:" + strconv.Itoa(port), user: "bench", pass: "bench-password"}
	if err := api.waitReady(ctx, "/healthcheck"); err != nil {
		return sys, nil, fmt.Errorf("%w\n%s", err, tail(sys.out.String()))
	}
	var cats []struct {
		ID int `json:"id"`
	}
	if err := api.do(ctx, "GET", "/v1/categories", nil, &cats); err != nil || len(cats) == 0 {
		return sys, nil, fmt.Errorf("categories: %v", err)
	}
	// The feeds are imported as OPML (POST /v1/import, which creates them
	// without fetching them: its scheduler polls them first), 500 to a
	// document: subscribing them one by one (POST /v1/feeds) fetches each
	// feed before answering, half an hour for 10,000 on this machine.
	var mu sync.Mutex
	var batch []string
	flush := func(ctx context.Context) error {
		var b strings.Builder
		b.WriteString(`<?xml version="1.0" encoding="UTF-8"?><opml version="2.0"><head><title>bench</title></head><body><outline text="All">`)
		for _, h := range batch {
			fmt.Fprintf(&b, `<outline type="rss" text="%[1]s" title="%[1]s" xmlUrl="http://%[1]s/feed.xml" htmlUrl="http://%[1]s/"/>`, h)
		}
		b.WriteString(`</outline></body></opml>`)
		batch = nil
		return api.do(ctx, "POST", "/v1/import", []byte(b.String()), nil)
	}
	attach := func(ctx context.Context, host string) error {
		mu.Lock()
		defer mu.Unlock()
		batch = append(batch, host)
		if len(batch) < 500 {
			return nil
		}
		return flush(ctx)
	}
	sys.flush = func(ctx context.Context) error {
		mu.Lock()
		defer mu.Unlock()
		if len(batch) == 0 {
			return nil
		}
		return flush(ctx)
	}
	return sys, attach, nil
}

type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

type apiClient struct {
	base       string
	header     map[string]string
	user, pass string
}

var httpClient = &http.Client{Timeout: 60 * time.Second}

func (c *apiClient) waitReady(ctx context.Context, path string) error {
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		resp, err := httpClient.Get(c.base + path)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	return fmt.Errorf("%s not ready within 2 min", c.base)
}

func (c *apiClient) do(ctx context.Context, method, path string, body, into any) error {
	var r io.Reader
	if _, raw := body.([]byte); body != nil && !raw {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		body = b // re-read on each attempt
	}
	for attempt := 0; ; attempt++ {
		if b, ok := body.([]byte); ok {
			r = bytes.NewReader(b)
		}
		req, err := http.NewRequestWithContext(ctx, method, c.base+path, r)
		if err != nil {
			return err
		}
		req.Header.Set("Content-Type", "application/json")
		for k, v := range c.header {
			req.Header.Set(k, v)
		}
		if c.user != "" {
			req.SetBasicAuth(c.user, c.pass)
		}
		resp, err := httpClient.Do(req)
		if err != nil {
			return err
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		// A 503 that changed nothing (many attaches to one feed at once,
		// a read model still catching up) is repeated.
		if resp.StatusCode == http.StatusServiceUnavailable && attempt < 10 && (method == "GET" || bytes.Contains(raw, []byte("nothing was changed"))) {
			time.Sleep(time.Second)
			continue
		}
		if resp.StatusCode/100 != 2 {
			return fmt.Errorf("%s %s: %d %s", method, path, resp.StatusCode, raw)
		}
		if into != nil {
			return json.Unmarshal(raw, into)
		}
		return nil
	}
}
