// Command idle measures what feedsvc costs while it has nothing to do: the
// CPU (utime + stime from /proc) of a `feedsvc serve` process with the
// non-crawler roles (api, projections, webhooks) and of a second one with
// the crawler role alone, both on one fresh database with no sources, and
// of each one's Postgres backends (told apart by application_name, which
// names the process), over a window after a warm-up.
//
// Builds given with -builds are measured in turn, alternating, -pairs
// times, so that a comparison of two builds is made in one run under the
// same outside load (bench/polling/README.md, "Idle roles").
//
//	go run ./bench/idle -builds main=/tmp/feedsvc-main,new=/tmp/feedsvc -pairs 2 -window 60s
//
// With -latency n it measures instead how long a write takes to be
// visible across processes: one process with the api role alone appends
// (POST /feeds/news, n times one after the other) and answers once the
// projectors, run by a second process (projections, webhooks), have
// projected the write (it reads their checkpoints every 10 ms).
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/prometheus/procfs"

	"github.com/feedsvc/feedsvc/bench/internal/systems"
)

type build struct{ name, path string }

func main() {
	var (
		builds  = flag.String("builds", "", "name=path of each feedsvc binary, comma-separated")
		pairs   = flag.Int("pairs", 2, "rounds of every build in turn")
		warmup  = flag.Duration("warmup", 20*time.Second, "wait after the start before measuring")
		window  = flag.Duration("window", 60*time.Second, "measured window")
		latency = flag.Int("latency", 0, "measure n cross-process writes instead of the idle CPU")
		admin   = flag.String("admin", "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable", "DSN of a database to create the benchmark's from")
	)
	flag.Parse()
	var bs []build
	for _, b := range strings.Split(*builds, ",") {
		name, path, ok := strings.Cut(b, "=")
		if !ok {
			log.Fatalf("-builds: %q is not name=path", b)
		}
		bs = append(bs, build{name, path})
	}
	if len(bs) == 0 {
		log.Fatal("-builds is required")
	}
	ctx := context.Background()
	if *latency > 0 {
		for round := range *pairs {
			for i := range bs {
				b := bs[(i+round)%len(bs)]
				d, err := crossProcess(ctx, *admin, b, *latency)
				if err != nil {
					log.Fatalf("%s: %v", b.name, err)
				}
				slices.Sort(d)
				q := func(f float64) float64 { return ms(d[int(f*float64(len(d)-1))]) }
				fmt.Printf("round %d %-8s %d writes, write to visible in another process: p50 %.1f ms, p90 %.1f ms, p99 %.1f ms, max %.1f ms | load %s\n",
					round+1, b.name, len(d), q(0.5), q(0.9), q(0.99), q(1), load())
			}
		}
		return
	}
	type sums struct {
		api, apiPG, crawl, crawlPG time.Duration
		xacts                      int64
	}
	total := map[string]*sums{}
	for round := range *pairs {
		for i := range bs {
			// Alternate the order from one round to the next.
			b := bs[(i+round)%len(bs)]
			r, err := run(ctx, *admin, b, *warmup, *window)
			if err != nil {
				log.Fatalf("%s: %v", b.name, err)
			}
			fmt.Printf("round %d %-8s api,projections,webhooks: %5.2f ms/s + Postgres %5.2f ms/s | crawler: %5.2f ms/s + Postgres %5.2f ms/s | %.1f transactions/s | load %s\n",
				round+1, b.name, perSec(r.api, *window), perSec(r.apiPG, *window), perSec(r.crawl, *window), perSec(r.crawlPG, *window),
				float64(r.xacts)/window.Seconds(), load())
			s := total[b.name]
			if s == nil {
				s = &sums{}
				total[b.name] = s
			}
			s.api += r.api
			s.apiPG += r.apiPG
			s.crawl += r.crawl
			s.crawlPG += r.crawlPG
			s.xacts += r.xacts
		}
	}
	all := *window * time.Duration(*pairs)
	fmt.Println("\nmean CPU per second of wall time (ms/s):")
	fmt.Println("| build | api,projections,webhooks | its Postgres | crawler alone | its Postgres | whole service | transactions/s |")
	fmt.Println("|---|---|---|---|---|---|---|")
	for _, b := range bs {
		s := total[b.name]
		fmt.Printf("| %s | %.2f | %.2f | %.2f | %.2f | %.2f | %.1f |\n", b.name, perSec(s.api, all), perSec(s.apiPG, all),
			perSec(s.crawl, all), perSec(s.crawlPG, all), perSec(s.api+s.apiPG+s.crawl+s.crawlPG, all), float64(s.xacts)/all.Seconds())
	}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func perSec(d, over time.Duration) float64 {
	return float64(d) / float64(time.Millisecond) / over.Seconds()
}

func load() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	return strings.Join(strings.Fields(string(b))[:3], " ")
}

type result struct {
	api, apiPG, crawl, crawlPG time.Duration
	xacts                      int64 // the database's transactions in the window (both processes)
}

// run starts both processes of build b on a fresh database, waits, and
// measures the window.
func run(ctx context.Context, admin string, b build, warmup, window time.Duration) (result, error) {
	db := "bench_idle_" + strconv.Itoa(os.Getpid())
	if err := systems.Recreate(ctx, admin, db); err != nil {
		return result{}, err
	}
	defer systems.Drop(context.Background(), admin, db) //nolint:errcheck // best effort
	dsn := strings.Replace(admin, "/postgres?", "/"+db+"?", 1)
	port, err := systems.FreePort()
	if err != nil {
		return result{}, err
	}
	port2, err := systems.FreePort()
	if err != nil {
		return result{}, err
	}
	env := append(os.Environ(), "DATABASE_URL="+dsn, "FEEDSVC_LOG_LEVEL=warn")
	migrate := exec.CommandContext(ctx, b.path, "migrate")
	migrate.Env = env
	if out, err := migrate.CombinedOutput(); err != nil {
		return result{}, fmt.Errorf("migrate: %w\n%s", err, out)
	}
	start := func(roles string, port int) (*exec.Cmd, error) {
		cmd := exec.Command(b.path, "serve")
		cmd.Env = append(env, "FEEDSVC_ROLES="+roles, "FEEDSVC_ADDR=127.0.0.1:"+strconv.Itoa(port))
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		return cmd, cmd.Start()
	}
	api, err := start("api,projections,webhooks", port)
	if err != nil {
		return result{}, err
	}
	defer systems.StopProcess(api, 30*time.Second)
	crawler, err := start("crawler", port2)
	if err != nil {
		return result{}, err
	}
	defer systems.StopProcess(crawler, 30*time.Second)
	if err := waitReady(ctx, "http://127.0.0.1:"+strconv.Itoa(port)+"/readyz"); err != nil {
		return result{}, err
	}
	time.Sleep(warmup)
	fs, err := procfs.NewDefaultFS()
	if err != nil {
		return result{}, err
	}
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		return result{}, err
	}
	defer conn.Close(ctx)
	before, err := sample(ctx, fs, conn, db, api.Process.Pid, crawler.Process.Pid)
	if err != nil {
		return result{}, err
	}
	time.Sleep(window)
	after, err := sample(ctx, fs, conn, db, api.Process.Pid, crawler.Process.Pid)
	if err != nil {
		return result{}, err
	}
	var r result
	r.xacts = after.xacts - before.xacts
	r.api = after.proc[api.Process.Pid] - before.proc[api.Process.Pid]
	r.crawl = after.proc[crawler.Process.Pid] - before.proc[crawler.Process.Pid]
	// A backend counts from the first sample, or from its start when it
	// connected during the window (its CPU before it was seen is its
	// start's).
	for pid, cpu := range after.backend {
		d := cpu - before.backend[pid]
		switch after.owner[pid] {
		case api.Process.Pid:
			r.apiPG += d
		case crawler.Process.Pid:
			r.crawlPG += d
		}
	}
	return r, nil
}

type snapshot struct {
	xacts   int64 // the database's transactions so far
	proc    map[int]time.Duration
	backend map[int]time.Duration
	owner   map[int]int // backend pid → service pid
}

func sample(ctx context.Context, fs procfs.FS, conn *pgx.Conn, db string, pids ...int) (snapshot, error) {
	s := snapshot{proc: map[int]time.Duration{}, backend: map[int]time.Duration{}, owner: map[int]int{}}
	for _, pid := range pids {
		cpu, err := systems.CPUOf(fs, pid)
		if err != nil {
			return s, err
		}
		s.proc[pid] = cpu
	}
	err := conn.QueryRow(ctx, `SELECT coalesce(sum(xact_commit + xact_rollback), 0)::bigint FROM pg_stat_database WHERE datname = $1`, db).Scan(&s.xacts)
	if err != nil {
		return s, fmt.Errorf("count transactions: %w", err)
	}
	rows, err := conn.Query(ctx, `SELECT pid, coalesce(application_name, '') FROM pg_stat_activity WHERE datname = $1`, db)
	if err != nil {
		return s, fmt.Errorf("list backends: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var pid int32
		var app string
		if err := rows.Scan(&pid, &app); err != nil {
			return s, err
		}
		for _, p := range pids {
			if strings.Contains(app, "-"+strconv.Itoa(p)+"-") {
				if cpu, err := systems.CPUOf(fs, int(pid)); err == nil {
					s.backend[int(pid)] = cpu
					s.owner[int(pid)] = p
				}
			}
		}
	}
	return s, rows.Err()
}

func waitReady(ctx context.Context, url string) error {
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	return fmt.Errorf("%s not ready after a minute", url)
}

// crossProcess starts build b as an API process and a projections
// process on a fresh database and times n feed creations through the
// API, each answered once the other process projected it.
func crossProcess(ctx context.Context, admin string, b build, n int) ([]time.Duration, error) {
	db := "bench_idle_" + strconv.Itoa(os.Getpid())
	if err := systems.Recreate(ctx, admin, db); err != nil {
		return nil, err
	}
	defer systems.Drop(context.Background(), admin, db) //nolint:errcheck // best effort
	dsn := strings.Replace(admin, "/postgres?", "/"+db+"?", 1)
	port, err := systems.FreePort()
	if err != nil {
		return nil, err
	}
	port2, err := systems.FreePort()
	if err != nil {
		return nil, err
	}
	env := append(os.Environ(), "DATABASE_URL="+dsn, "FEEDSVC_LOG_LEVEL=warn", "FEEDSVC_RATE_LIMIT=unlimited")
	cli := func(args ...string) (string, error) {
		cmd := exec.CommandContext(ctx, b.path, args...)
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		if err != nil {
			return "", fmt.Errorf("%v: %w\n%s", args, err, out)
		}
		return string(out), nil
	}
	if _, err := cli("migrate"); err != nil {
		return nil, err
	}
	out, err := cli("keys", "create", "--org", "bench")
	if err != nil {
		return nil, err
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	key := strings.TrimSpace(lines[len(lines)-1])
	start := func(roles string, port int) (*exec.Cmd, error) {
		cmd := exec.Command(b.path, "serve")
		cmd.Env = append(env, "FEEDSVC_ROLES="+roles, "FEEDSVC_ADDR=127.0.0.1:"+strconv.Itoa(port))
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		return cmd, cmd.Start()
	}
	proj, err := start("projections,webhooks", port2)
	if err != nil {
		return nil, err
	}
	defer systems.StopProcess(proj, 30*time.Second)
	api, err := start("api", port)
	if err != nil {
		return nil, err
	}
	defer systems.StopProcess(api, 30*time.Second)
	base := "http://127.0.0.1:" + strconv.Itoa(port)
	if err := waitReady(ctx, base+"/readyz"); err != nil {
		return nil, err
	}
	time.Sleep(5 * time.Second) // both idle
	var d []time.Duration
	for i := range n + 5 {
		body := strings.NewReader(fmt.Sprintf(`{"name":"latency %d","description":"bench/idle"}`, i))
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, base+"/feeds/news", body)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+key)
		t0 := time.Now()
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return nil, err
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		took := time.Since(t0)
		if resp.StatusCode/100 != 2 {
			return nil, fmt.Errorf("POST /feeds/news: %d %s", resp.StatusCode, raw)
		}
		if i >= 5 { // the first few warm the connections
			d = append(d, took)
		}
		// Writes apart, as a user's: each finds both processes idle.
		time.Sleep(time.Duration(50+i%7*37) * time.Millisecond)
	}
	return d, nil
}
