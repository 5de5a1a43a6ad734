// Command ingest measures ingestion: how long the service takes from a
// site source being attached to a feed until every article of the site is
// listed as an item by the API, and the CPU it and Postgres spend per item.
//
// It serves a generated news site on 127.0.0.1 (robots.txt, a sitemap and
// an RSS feed listing every article, all within the 14-day backfill
// window), runs `feedsvc serve` as its own process against a fresh
// database (API, projections and crawler, as in production, at the default
// politeness of 2 requests per host), creates a news feed and attaches the
// site through the API, then polls the feed's items until all are listed.
// CPU is read from /proc: the service process, and the Postgres backends
// of the benchmark's database (so Postgres must run on this machine).
//
//	go build -o /tmp/feedsvc ./cmd/feedsvc
//	go run ./bench/ingest -feedsvc /tmp/feedsvc -runs 3
//
// With -miniflux (a binary built from Miniflux's source) each round also
// subscribes Miniflux to the same site's RSS feed, once with its crawler
// ("fetch original content": every article page fetched and extracted, as
// feedsvc does) and once without (the feed's items only), and reports
// items per CPU-second (service + Postgres) of each beside feedsvc's.
// Miniflux's workers open a connection per statement, so its Postgres CPU
// is counted through the postmaster (systems.BackendCPU), which needs a
// cluster of the run's own: -pg-port (on by default with -miniflux).
//
// Only the database named by -db (or the cluster of -pg-port) is created
// and dropped.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/prometheus/procfs"

	"github.com/feedsvc/feedsvc/bench/internal/systems"
	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/internal/database"
)

type options struct {
	dsn       string
	feedsvc   string
	articles  int
	pageBytes int
	runs      int
	timeout   time.Duration
	poll      time.Duration
	env       []string
	keep      bool
	verbose   bool

	miniflux     string
	before       string
	variedText   bool
	systems      string
	pgPort       int
	pgBin, pgDir string
	pgSet        stringList
	// private is set when the run has a cluster of its own: every
	// backend's CPU is then counted, those that exited included.
	private bool
	admin   string
}

func main() {
	var o options
	var env stringList
	flag.StringVar(&o.dsn, "db", defaultDB(), "database URL of the benchmark's own database (dropped and created for each run)")
	flag.StringVar(&o.feedsvc, "feedsvc", "", "path of a built feedsvc binary (required: go build -o /tmp/feedsvc ./cmd/feedsvc)")
	flag.IntVar(&o.articles, "articles", 2000, "articles on the generated site")
	flag.IntVar(&o.pageBytes, "page-bytes", 47_000, "size of an article page")
	flag.IntVar(&o.runs, "runs", 3, "runs, each on a fresh database and service process")
	flag.DurationVar(&o.timeout, "timeout", 10*time.Minute, "give up on a run after this long")
	flag.DurationVar(&o.poll, "poll", 100*time.Millisecond, "how often the feed's items are counted through the API")
	flag.Var(&env, "env", "KEY=VALUE added to the service's environment (repeatable)")
	flag.BoolVar(&o.keep, "keep", false, "keep the last run's database")
	flag.BoolVar(&o.verbose, "v", false, "show the service's log (info level)")
	flag.StringVar(&o.miniflux, "miniflux", "", "Miniflux binary built from its source (outside the repository); empty runs feedsvc alone")
	flag.BoolVar(&o.variedText, "varied-text", false, "articles' bodies drawn from a vocabulary (no two pages alike) instead of one template with the numbers changed (every page near-alike to every other: the copy check's worst case)")
	flag.StringVar(&o.before, "feedsvc-before", "", "a second feedsvc binary (another build), run in each round as the system feedsvc-before, beside -feedsvc's")
	flag.StringVar(&o.systems, "systems", "", "systems of each round, run one at a time, the order reversed every other round: feedsvc; feedsvc-before (-feedsvc-before); miniflux-crawler (subscribed with its crawler on); miniflux (crawler off); default: feedsvc, then feedsvc-before with -feedsvc-before, then both Miniflux's with -miniflux")
	flag.IntVar(&o.pgPort, "pg-port", -1, "start a Postgres cluster of the run's own on this port (the machine's binaries, its settings autovacuum=off and fsync=on); 0 uses -db's server; default: 15599 with -miniflux, 0 without")
	flag.StringVar(&o.pgBin, "pg-bin", "/usr/lib/postgresql/15/bin", "Postgres binaries, for -pg-port")
	flag.StringVar(&o.pgDir, "pg-dir", "/tmp/bench-ingest-pg", "data directory of -pg-port's cluster (emptied first, removed after)")
	flag.Var(&o.pgSet, "pg-set", "NAME=VALUE added to -pg-port's cluster settings (repeatable)")
	flag.Parse()
	o.env = env
	if o.pgPort < 0 {
		o.pgPort = 0
		if o.miniflux != "" {
			o.pgPort = 15599
		}
	}
	if o.miniflux != "" && o.pgPort == 0 {
		fmt.Fprintln(os.Stderr, "ingest: -miniflux needs -pg-port: Miniflux's short-lived backends are counted through the postmaster of a cluster of the run's own")
		os.Exit(2)
	}
	if o.feedsvc == "" || o.articles < 1 || o.articles > 99_999 || o.runs < 1 || o.pageBytes < 8_000 {
		fmt.Fprintln(os.Stderr, "ingest: -feedsvc is required; -articles in [1, 99999], -runs ≥ 1, -page-bytes ≥ 8000")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, o, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "ingest:", err)
		os.Exit(1)
	}
}

type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, ",") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }

func defaultDB() string {
	if v := os.Getenv("DATABASE_URL"); v != "" {
		if dsn, err := database.WithDatabase(v, "feedsvc_bench_ingest"); err == nil {
			return dsn
		}
	}
	return "postgres://postgres@127.0.0.1:5432/feedsvc_bench_ingest?sslmode=disable"
}

// result is one run's figures.
type result struct {
	System   string
	Elapsed  time.Duration
	Service  time.Duration // CPU of the service process
	Postgres time.Duration // CPU of the database's backends
	Backends int
	// Transactions in the database, counted a little after the run (see
	// BackendCPU.Transactions).
	Transactions int64
	Load         float64 // 1-minute load average at the start
	Site         siteStats
	FirstItems   time.Duration // attach to the first item listed
	// Outside is the oldest write transaction of another database seen
	// during the run.
	Outside time.Duration
	// Crawled is from the attach to the last article served.
	Crawled time.Duration
}

func run(ctx context.Context, o options, out io.Writer) error {
	names := []string{"feedsvc"}
	if o.before != "" {
		names = append(names, "feedsvc-before")
	}
	if o.miniflux != "" {
		names = append(names, "miniflux-crawler", "miniflux")
	}
	if o.systems != "" {
		names = strings.Split(o.systems, ",")
	}
	where := "the server of -db"
	if o.pgPort != 0 {
		pg, err := systems.StartPostgres(ctx, o.pgBin, o.pgDir, o.pgPort, append([]string{"autovacuum=off", "fsync=on"}, o.pgSet...)...)
		if err != nil {
			return err
		}
		defer pg.Stop()
		o.private, o.admin = true, pg.Admin
		o.dsn = systems.DSNOf(pg.Admin, "feedsvc_bench_ingest")
		where = fmt.Sprintf("a cluster of the run's own on port %d (every backend counted, exited ones through the postmaster)", o.pgPort)
	}
	s := newSite(o.articles, o.pageBytes, domain.BackfillWindow)
	s.variedText = o.variedText
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("listen for the site: %w", err)
	}
	s.listen(ln.Addr().String())
	srv := &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()

	fmt.Fprintf(out, "site: %d articles of %d bytes, sitemap %d bytes, RSS %d bytes, at http://%s; Postgres: %s\n",
		o.articles, len(s.pages[0]), len(s.sitemap), len(s.feed), s.host, where)
	var rounds [][]result
	for i := range o.runs {
		order := slices.Clone(names)
		if i%2 == 1 {
			slices.Reverse(order)
		}
		if i > 0 {
			// The same articles, dated from now again: a long series
			// keeps every article within the 14-day window.
			s.renew()
		}
		var round []result
		for _, name := range order {
			s.reset()
			var r result
			var err error
			switch name {
			case "feedsvc":
				r, err = o.runOnce(ctx, s, i == o.runs-1 && o.keep)
			case "feedsvc-before":
				b := o
				b.feedsvc = b.before
				r, err = b.runOnce(ctx, s, false)
			case "miniflux", "miniflux-crawler":
				r, err = o.runMiniflux(ctx, s, name == "miniflux-crawler")
			default:
				err = fmt.Errorf("unknown system %q", name)
			}
			if err != nil {
				return fmt.Errorf("run %d, %s: %w", i+1, name, err)
			}
			r.System = name
			round = append(round, r)
			r.print(out, i+1, o.articles)
		}
		rounds = append(rounds, round)
	}
	if len(names) > 1 {
		summarize(out, rounds, o.articles)
	}
	return nil
}

func (r result) print(out io.Writer, run, items int) {
	n := float64(items)
	fmt.Fprintf(out, "run %d %s: load %.2f  %d items in %.2fs = %.0f items/s  CPU/item: service %.2f ms, postgres %.2f ms (%d backends)  = %.0f items per CPU-second\n",
		run, r.System, r.Load, items, r.Elapsed.Seconds(), n/r.Elapsed.Seconds(), ms(r.Service)/n, ms(r.Postgres)/n, r.Backends, r.perCPUSecond(items))
	if strings.HasPrefix(r.System, "feedsvc") {
		fmt.Fprintf(out, "       first item after %.2fs, then %.0f items/s; last article served after %.2fs; database: %.1f transactions per item; longest write transaction of another database: %.1fs\n",
			r.FirstItems.Seconds(), (n-1)/(r.Elapsed-r.FirstItems).Seconds(), r.Crawled.Seconds(), float64(r.Transactions)/n, r.Outside.Seconds())
	} else {
		fmt.Fprintf(out, "       last article served after %.2fs; database: %.1f transactions per item\n",
			r.Crawled.Seconds(), float64(r.Transactions)/n)
	}
	fmt.Fprintf(out, "       site: at most %d requests at once; requests %v (304: %d); %d articles fetched, %d fetched again\n",
		r.Site.MaxConcurrent, r.Site.Requests, r.Site.NotModified, r.Site.Articles, r.Site.Refetched)
}

// perCPUSecond is items per CPU-second of the service and its Postgres
// backends together.
func (r result) perCPUSecond(items int) float64 {
	return float64(items) / (r.Service + r.Postgres).Seconds()
}

// summarize prints, for each round, feedsvc's items per CPU-second over
// each peer's in the same round, and the medians.
func summarize(out io.Writer, rounds [][]result, items int) {
	ratios := map[string][]float64{}
	fmt.Fprintln(out, "\nitems per CPU-second, feedsvc over each peer of the same round:")
	for i, round := range rounds {
		var own float64
		for _, r := range round {
			if r.System == "feedsvc" {
				own = r.perCPUSecond(items)
			}
		}
		fmt.Fprintf(out, "run %d:", i+1)
		for _, r := range round {
			if r.System == "feedsvc" || own == 0 {
				continue
			}
			x := own / r.perCPUSecond(items)
			ratios[r.System] = append(ratios[r.System], x)
			fmt.Fprintf(out, "  over %s %.2fx (%.0f against %.0f)", r.System, x, own, r.perCPUSecond(items))
		}
		fmt.Fprintln(out)
	}
	for _, name := range slices.Sorted(maps.Keys(ratios)) {
		fmt.Fprintf(out, "median over %s: %.2fx\n", name, median(ratios[name]))
	}
}

func median(xs []float64) float64 {
	xs = slices.Clone(xs)
	slices.Sort(xs)
	if len(xs)%2 == 1 {
		return xs[len(xs)/2]
	}
	return (xs[len(xs)/2-1] + xs[len(xs)/2]) / 2
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// runOnce runs the service on a fresh database and times one ingestion.
func (o options) runOnce(ctx context.Context, s *site, keep bool) (result, error) {
	ctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	if err := database.DropDatabase(ctx, o.dsn); err != nil {
		return result{}, err
	}
	if !keep {
		defer func() { _ = database.DropDatabase(context.Background(), o.dsn) }()
	}
	dir, err := os.MkdirTemp("", "bench-ingest-")
	if err != nil {
		return result{}, fmt.Errorf("temp dir: %w", err)
	}
	defer os.RemoveAll(dir)

	if _, err := o.feedsvcCmd(ctx, "migrate"); err != nil {
		return result{}, err
	}
	keyOut, err := o.feedsvcCmd(ctx, "keys", "create", "--org", "bench")
	if err != nil {
		return result{}, err
	}
	lines := strings.Split(strings.TrimSpace(keyOut), "\n")
	api := &apiClient{key: strings.TrimSpace(lines[len(lines)-1])}

	svc, err := o.startService(ctx, dir, api)
	if err != nil {
		return result{}, err
	}
	defer svc.stop()

	feed, err := api.createFeed(ctx)
	if err != nil {
		return result{}, svc.withLog(err)
	}
	// Let the projectors settle after the feed's creation.
	time.Sleep(time.Second)

	fs, err := procfs.NewDefaultFS()
	if err != nil {
		return result{}, fmt.Errorf("open /proc: %w", err)
	}
	adminDSN, err := database.WithDatabase(o.dsn, "postgres")
	if err != nil {
		return result{}, err
	}
	cfg, err := pgx.ParseConfig(o.dsn)
	if err != nil {
		return result{}, fmt.Errorf("parse -db: %w", err)
	}
	dbName := cfg.Database
	pg, err := systems.NewBackendCPU(ctx, adminDSN, dbName)
	if err != nil {
		return result{}, err
	}
	defer pg.Close()

	var r result
	if avg, err := fs.LoadAvg(); err == nil {
		r.Load = avg.Load1
	}
	svcBase, err := systems.CPUOf(fs, svc.pid())
	if err != nil {
		return result{}, err
	}
	if err := pg.Sample(ctx); err != nil {
		return result{}, err
	}
	txBase, err := pg.Transactions(ctx)
	if err != nil {
		return result{}, err
	}
	sampling, stopSampling := context.WithCancel(ctx)
	sampled := make(chan struct{})
	go func() { defer close(sampled); pg.Run(sampling, 200*time.Millisecond) }()

	start := time.Now()
	if err := api.attachSite(ctx, feed, s.host); err != nil {
		stopSampling()
		<-sampled
		return result{}, svc.withLog(err)
	}
	listed := 0
	for listed < o.articles {
		time.Sleep(o.poll)
		n, err := api.countItems(ctx, feed)
		if err != nil {
			stopSampling()
			<-sampled
			return result{}, svc.withLog(fmt.Errorf("%d of %d items listed: %w", listed, o.articles, err))
		}
		if listed == 0 && n > 0 {
			r.FirstItems = time.Since(start)
		}
		listed = n
	}
	r.Elapsed = time.Since(start)
	svcEnd, err := systems.CPUOf(fs, svc.pid())
	stopSampling()
	<-sampled
	if err != nil {
		return result{}, err
	}
	if err := pg.Sample(context.Background()); err != nil {
		return result{}, err
	}
	r.Service = svcEnd - svcBase
	r.Postgres, r.Backends = pg.Sampled()
	if o.private {
		// Every backend, exited ones too, as for Miniflux.
		r.Postgres, r.Backends = pg.Total()
	}
	r.Outside = pg.OutsideTransaction()
	r.Site = s.stats()
	r.Crawled = r.Site.LastArticle.Sub(start)
	time.Sleep(1500 * time.Millisecond) // let the backends report their transactions
	txEnd, err := pg.Transactions(ctx)
	if err != nil {
		return result{}, err
	}
	r.Transactions = txEnd - txBase
	return r, nil
}

// feedsvcCmd runs a feedsvc command against the benchmark's database.
func (o options) feedsvcCmd(ctx context.Context, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, o.feedsvc, args...)
	cmd.Env = append(os.Environ(), "DATABASE_URL="+o.dsn, "FEEDSVC_LOG_LEVEL=warn")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("feedsvc %s: %w: %s", strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String(), nil
}

// service is a running `feedsvc serve`.
type service struct {
	cmd     *exec.Cmd
	logPath string
	done    chan struct{}
}

func (s *service) pid() int { return s.cmd.Process.Pid }

func (s *service) stop() {
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(30 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.done
	}
}

// withLog adds the end of the service's log to err.
func (s *service) withLog(err error) error {
	b, _ := os.ReadFile(s.logPath)
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return fmt.Errorf("%w\nservice log (end):\n%s", err, b)
}

func (o options) startService(ctx context.Context, dir string, api *apiClient) (*service, error) {
	port, err := systems.FreePort()
	if err != nil {
		return nil, err
	}
	api.base = fmt.Sprintf("http://127.0.0.1:%d", port)
	level := "warn"
	if o.verbose {
		level = "info"
	}
	svc := &service{logPath: filepath.Join(dir, "serve.log"), done: make(chan struct{})}
	logFile, err := os.Create(svc.logPath)
	if err != nil {
		return nil, fmt.Errorf("service log: %w", err)
	}
	svc.cmd = exec.Command(o.feedsvc, "serve")
	svc.cmd.Env = append(os.Environ(), "DATABASE_URL="+o.dsn, fmt.Sprintf("FEEDSVC_ADDR=127.0.0.1:%d", port),
		"FEEDSVC_ALLOW_PRIVATE_NETWORKS=true", "FEEDSVC_LOG_LEVEL="+level, "FEEDSVC_LOG_FORMAT=text")
	svc.cmd.Env = append(svc.cmd.Env, o.env...)
	if o.verbose {
		svc.cmd.Stdout, svc.cmd.Stderr = io.MultiWriter(logFile, os.Stderr), io.MultiWriter(logFile, os.Stderr)
	} else {
		svc.cmd.Stdout, svc.cmd.Stderr = logFile, logFile
	}
	if err := svc.cmd.Start(); err != nil {
		logFile.Close()
		return nil, fmt.Errorf("start feedsvc serve: %w", err)
	}
	go func() {
		_ = svc.cmd.Wait()
		logFile.Close()
		close(svc.done)
	}()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if api.ready(ctx) {
			return svc, nil
		}
		select {
		case <-svc.done:
			return nil, svc.withLog(errors.New("feedsvc serve exited"))
		default:
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			svc.stop()
			return nil, svc.withLog(errors.New("feedsvc serve did not become ready"))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// apiClient calls the service's API with one key.
type apiClient struct {
	base, key string
	http      http.Client
}

func (c *apiClient) ready(ctx context.Context) bool {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+"/readyz", nil)
	if err != nil {
		return false
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

func (c *apiClient) do(ctx context.Context, method, path string, body any, want int, into any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return fmt.Errorf("encode %s %s: %w", method, path, err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	req.Header.Set("Authorization", "Bearer "+c.key)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return fmt.Errorf("%s %s: read answer: %w", method, path, err)
	}
	if resp.StatusCode != want {
		return fmt.Errorf("%s %s: status %d, want %d: %s", method, path, resp.StatusCode, want, raw)
	}
	var env struct {
		Data json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(raw, &env); err != nil {
		return fmt.Errorf("%s %s: decode answer: %w", method, path, err)
	}
	if err := json.Unmarshal(env.Data, into); err != nil {
		return fmt.Errorf("%s %s: decode data: %w", method, path, err)
	}
	return nil
}

func (c *apiClient) createFeed(ctx context.Context) (string, error) {
	var feed struct {
		ID string `json:"id"`
	}
	err := c.do(ctx, http.MethodPost, "/feeds/news", map[string]any{"name": "Ingestion benchmark", "description": "A generated site"},
		http.StatusCreated, &feed)
	return feed.ID, err
}

func (c *apiClient) attachSite(ctx context.Context, feed, host string) error {
	var att map[string]any
	return c.do(ctx, http.MethodPost, "/feeds/news/"+feed+"/sources", map[string]any{"sourceType": "site", "domain": host},
		http.StatusCreated, &att)
}

func (c *apiClient) countItems(ctx context.Context, feed string) (int, error) {
	var page struct {
		Total int `json:"total"`
	}
	err := c.do(ctx, http.MethodGet, "/feeds/news/"+feed+"/items?limit=1", nil, http.StatusOK, &page)
	return page.Total, err
}
