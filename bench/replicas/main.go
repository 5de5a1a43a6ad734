// Command replicas measures list reads served by API processes reading
// from a streaming replica beside one process reading from the primary,
// in one run (bench/replicas/README.md). It starts a private primary and a
// pg_basebackup -R standby of it (testkit/pgstandby), seeds the primary
// with bench/seed api (-feeds news feeds, -items items spread over them,
// projected), waits for the standby to replay it, then for each setup
//
//	primary-1   one `feedsvc serve` (api role) reading from the primary
//	replica-2   two, both with DATABASE_READ_URL at the standby
//	replica-3   three, likewise
//
// measures, with the setup's processes started fresh: an idle window (no
// requests: what the processes cost by being there), a window at a fixed
// offered rate (open loop, latency from each request's scheduled time),
// and a window at saturation (-clients requests in flight at all times).
// Requests are GET /feeds/news/{id}/items?limit=50 of a random feed,
// spread round robin over the setup's processes. For each window: answers
// per second, p50 and p99, errors, the CPU seconds of each API process, of
// the primary's and of the standby's Postgres (every process of each
// server) and of this program, and the load average.
//
// Everything runs on this machine: the figures are ratios of one run, not
// the capacity of separate nodes.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/feedsvc/feedsvc/testkit/pgstandby"
)

func main() {
	t := &harness{}
	// pgstandby and testdb report failures through Fatalf; here that ends
	// the run after stopping what was started.
	defer func() {
		if r := recover(); r != nil {
			if f, ok := r.(fatal); ok {
				fmt.Fprintln(os.Stderr, "replicas:", string(f))
				t.close()
				os.Exit(1)
			}
			t.close()
			panic(r)
		}
	}()
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-sig
		fmt.Fprintln(os.Stderr, "replicas: interrupted, stopping the servers")
		t.close()
		os.Exit(130)
	}()
	err := run(t)
	t.close()
	if err != nil {
		fmt.Fprintln(os.Stderr, "replicas:", err)
		os.Exit(1)
	}
}

type options struct {
	feedsvc, seed string
	feeds, items  int
	rate          float64
	idle, window  time.Duration
	warmup        time.Duration
	clients       int
	setups        string
}

func run(t *harness) error {
	var o options
	flag.StringVar(&o.feedsvc, "feedsvc", "bin/feedsvc", "the feedsvc binary")
	flag.StringVar(&o.seed, "seed", "bin/seed", "the bench/seed binary")
	flag.IntVar(&o.feeds, "feeds", 50, "news feeds; the items are spread over them")
	flag.IntVar(&o.items, "items", 100_000, "items in all")
	flag.Float64Var(&o.rate, "rate", 400, "offered rate of the fixed-rate window (requests/s, all processes together)")
	flag.DurationVar(&o.idle, "idle", 10*time.Second, "the idle window")
	flag.DurationVar(&o.window, "window", 20*time.Second, "the fixed-rate and the saturation window each")
	flag.DurationVar(&o.warmup, "warmup", 3*time.Second, "reads before the windows, unmeasured")
	flag.IntVar(&o.clients, "clients", 32, "requests in flight in the saturation window")
	flag.StringVar(&o.setups, "setups", "primary-1,replica-2,replica-3", "setups, in order")
	flag.Parse()
	ctx := context.Background()
	fmt.Printf("machine: %d cores (shared), load at start: %s\n", runtime.NumCPU(), loadAverage())

	pair := pgstandby.Start(t)
	primaryURL, standbyURL := pair.Primary.Database("feedsvc"), pair.Database("feedsvc")
	t0 := time.Now()
	seed := exec.Command(o.seed, "api", "-db", primaryURL, "-feeds", strconv.Itoa(o.feeds-1),
		"-items", strconv.Itoa(o.items), "-load", "copy", "-spread")
	seed.Stderr = os.Stderr
	out, err := seed.Output()
	if err != nil {
		return fmt.Errorf("seed: %w", err)
	}
	key := ""
	for _, l := range strings.Split(string(out), "\n") {
		if v, ok := strings.CutPrefix(l, "KEY="); ok {
			key = v
		}
	}
	if key == "" {
		return fmt.Errorf("seed printed no key: %s", out)
	}
	fmt.Printf("seeded %d feeds, %d items, projected, in %s (untimed)\n", o.feeds, o.items, time.Since(t0).Round(time.Second))
	if err := waitReplayed(ctx, pair.Primary.URL, pair.StandbyURL); err != nil {
		return err
	}
	primaryPM, err := postmaster(ctx, pair.Primary.URL)
	if err != nil {
		return err
	}
	standbyPM, err := postmaster(ctx, pair.StandbyURL)
	if err != nil {
		return err
	}

	var results []result
	var feeds []string
	for _, name := range strings.Split(o.setups, ",") {
		n, onReplica, err := parseSetup(name)
		if err != nil {
			return err
		}
		env := []string{"DATABASE_URL=" + primaryURL, "FEEDSVC_ROLES=api", "FEEDSVC_LOG_LEVEL=warn",
			"FEEDSVC_MAX_CONNS_PER_IP=0"}
		if onReplica {
			env = append(env, "DATABASE_READ_URL="+standbyURL)
		}
		procs, err := startAPIs(t, o.feedsvc, n, env, onReplica)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		if feeds == nil {
			if feeds, err = listFeeds(procs[0].base, key); err != nil {
				return err
			}
		}
		targets := targetsOf(procs, feeds)
		client := httpClient(max(o.clients, 256))
		_, _ = saturate(client, targets, key, o.clients, o.warmup)
		m := newMeter(procs, primaryPM, standbyPM)
		results = append(results, m.measure(name, "idle", func() load { time.Sleep(o.idle); return load{} }))
		results = append(results, m.measure(name, fmt.Sprintf("%.0f/s", o.rate), func() load {
			return openLoop(client, targets, key, o.rate, o.window)
		}))
		results = append(results, m.measure(name, "saturation", func() load {
			l, _ := saturate(client, targets, key, o.clients, o.window)
			return l
		}))
		for _, p := range procs {
			p.stop()
		}
		client.CloseIdleConnections()
	}
	fmt.Println()
	report(os.Stdout, results, o)
	fmt.Printf("load at end: %s\n", loadAverage())
	return nil
}

func parseSetup(s string) (n int, onReplica bool, err error) {
	where, count, ok := strings.Cut(s, "-")
	n, convErr := strconv.Atoi(count)
	if !ok || convErr != nil || n < 1 || n > 4 || (where != "primary" && where != "replica") {
		return 0, false, fmt.Errorf("setup %q: want primary-N or replica-N, N from 1 to 4", s)
	}
	return n, where == "replica", nil
}

// api is one `feedsvc serve` process.
type api struct {
	cmd  *exec.Cmd
	base string
	done chan struct{}
}

func (p *api) stop() {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(15 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// startAPIs starts n processes and waits until each is ready and, with a
// replica, reads from it.
func startAPIs(t *harness, bin string, n int, env []string, onReplica bool) ([]*api, error) {
	var procs []*api
	for range n {
		addr, err := freeAddr()
		if err != nil {
			return nil, err
		}
		p := &api{cmd: exec.Command(bin, "serve"), base: "http://" + addr, done: make(chan struct{})}
		p.cmd.Env = append(os.Environ(), append(slices.Clone(env), "FEEDSVC_ADDR="+addr)...)
		p.cmd.Stdout, p.cmd.Stderr = os.Stderr, os.Stderr
		if err := p.cmd.Start(); err != nil {
			return nil, fmt.Errorf("start feedsvc serve: %w", err)
		}
		go func() { _ = p.cmd.Wait(); close(p.done) }()
		t.Cleanup(p.stop)
		procs = append(procs, p)
	}
	// A process without a replica says no "reads" at all.
	want := ""
	if onReplica {
		want = "replica"
	}
	for _, p := range procs {
		deadline := time.Now().Add(60 * time.Second)
		for readsFrom(p.base) != want {
			if time.Now().After(deadline) {
				return nil, fmt.Errorf("%s: readyz never said ready with reads going to the %q", p.base, want)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	return procs, nil
}

func readsFrom(base string) string {
	resp, err := http.Get(base + "/readyz")
	if err != nil {
		return "not ready"
	}
	defer resp.Body.Close()
	var body struct{ Status, Reads string }
	_ = json.NewDecoder(resp.Body).Decode(&body)
	if resp.StatusCode != http.StatusOK {
		return "not ready"
	}
	return body.Reads
}

func listFeeds(base, key string) ([]string, error) {
	req, _ := http.NewRequest(http.MethodGet, base+"/feeds/news", nil)
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("list feeds: %w", err)
	}
	defer resp.Body.Close()
	var env struct {
		Data []struct{ ID string }
	}
	if err := json.NewDecoder(resp.Body).Decode(&env); err != nil || resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("list feeds: %d %v", resp.StatusCode, err)
	}
	var ids []string
	for _, f := range env.Data {
		ids = append(ids, f.ID)
	}
	return ids, nil
}

// targets are the URLs a window reads: every feed's first page through
// every process; request i goes to process i % processes.
type targets struct {
	processes int
	urls      [][]string // [process][feed]
}

func targetsOf(procs []*api, feeds []string) targets {
	t := targets{processes: len(procs)}
	for _, p := range procs {
		var urls []string
		for _, f := range feeds {
			urls = append(urls, p.base+"/feeds/news/"+f+"/items?limit=50")
		}
		t.urls = append(t.urls, urls)
	}
	return t
}

func (t targets) pick(i int) string {
	urls := t.urls[i%t.processes]
	return urls[rand.IntN(len(urls))]
}

func httpClient(conns int) *http.Client {
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		MaxIdleConns: conns, MaxIdleConnsPerHost: conns, IdleConnTimeout: time.Minute,
	}}
}

// load is what a window's requests got.
type load struct {
	answers, errors int
	latencies       []time.Duration
	took            time.Duration
}

func get(client *http.Client, url, key string) bool {
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := client.Do(req)
	if err != nil {
		return false
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// openLoop sends request i at start + i/rate whatever became of earlier
// ones, and measures each from that time (a stall counts as the queue it
// causes). At most 512 are in flight; past that, due requests wait.
func openLoop(client *http.Client, t targets, key string, rate float64, d time.Duration) load {
	type due struct {
		i  int
		at time.Time
	}
	jobs := make(chan due, 1<<16)
	var (
		mu  sync.Mutex
		out load
		wg  sync.WaitGroup
	)
	for range 512 {
		wg.Go(func() {
			for j := range jobs {
				ok := get(client, t.pick(j.i), key)
				lat := time.Since(j.at)
				mu.Lock()
				if ok {
					out.answers++
					out.latencies = append(out.latencies, lat)
				} else {
					out.errors++
				}
				mu.Unlock()
			}
		})
	}
	start := time.Now()
	for i := 0; ; i++ {
		at := start.Add(time.Duration(float64(i) / rate * float64(time.Second)))
		if at.Sub(start) >= d {
			break
		}
		time.Sleep(time.Until(at))
		jobs <- due{i: i, at: at}
	}
	close(jobs)
	wg.Wait()
	out.took = time.Since(start)
	return out
}

// saturate keeps clients requests in flight for d.
func saturate(client *http.Client, t targets, key string, clients int, d time.Duration) (load, error) {
	var (
		mu   sync.Mutex
		out  load
		wg   sync.WaitGroup
		next atomic.Int64
	)
	start := time.Now()
	end := start.Add(d)
	for range clients {
		wg.Go(func() {
			for time.Now().Before(end) {
				began := time.Now()
				ok := get(client, t.pick(int(next.Add(1))), key)
				lat := time.Since(began)
				mu.Lock()
				if ok {
					out.answers++
					out.latencies = append(out.latencies, lat)
				} else {
					out.errors++
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	out.took = time.Since(start)
	if out.answers == 0 {
		return out, errors.New("no answers")
	}
	return out, nil
}

// result is one window of one setup.
type result struct {
	setup, window      string
	load               load
	apiCPU             []time.Duration
	primaryCPU         time.Duration
	standbyCPU         time.Duration
	selfCPU            time.Duration
	loadBefore, loadAt string
}

// meter reads the CPU of the API processes, of each server's processes
// (the postmaster and its children: backends, WAL sender and receiver,
// the standby's replay) and of this program.
type meter struct {
	procs                []*api
	primaryPM, standbyPM int
}

func newMeter(procs []*api, primaryPM, standbyPM int) *meter {
	return &meter{procs: procs, primaryPM: primaryPM, standbyPM: standbyPM}
}

type cpuSample struct {
	api              []time.Duration
	primary, standby cpuByPid
	self             time.Duration
}

func (m *meter) sample() cpuSample {
	s := cpuSample{primary: serverCPU(m.primaryPM), standby: serverCPU(m.standbyPM), self: procCPU(os.Getpid())}
	for _, p := range m.procs {
		s.api = append(s.api, procCPU(p.cmd.Process.Pid))
	}
	return s
}

func (m *meter) measure(setup, window string, do func() load) result {
	r := result{setup: setup, window: window, loadBefore: loadAverage()}
	before := m.sample()
	r.load = do()
	after := m.sample()
	for i := range after.api {
		r.apiCPU = append(r.apiCPU, after.api[i]-before.api[i])
	}
	r.primaryCPU = after.primary.sub(before.primary)
	r.standbyCPU = after.standby.sub(before.standby)
	r.selfCPU = after.self - before.self
	r.loadAt = loadAverage()
	fmt.Fprintf(os.Stderr, "%s %s: %d answers, %d errors, load %s\n", setup, window, r.load.answers, r.load.errors, r.loadAt)
	return r
}

func report(w io.Writer, results []result, o options) {
	fmt.Fprintf(w, "GET /feeds/news/{id}/items?limit=50 of a random feed of %d (%d items in all); fixed rate %.0f/s, saturation %d in flight; windows of %s (idle %s)\n\n",
		o.feeds, o.items, o.rate, o.clients, o.window, o.idle)
	fmt.Fprintln(w, "| Setup | Window | Answers/s | Errors | p50 | p99 | API CPU s (each) | Primary PG CPU s | Standby PG CPU s | Load generator CPU s | Per 1,000 answers: API / primary PG / standby PG CPU ms | Load (1 min) before → after |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|---|---|")
	for _, r := range results {
		var each []string
		var apiCPU time.Duration
		for _, c := range r.apiCPU {
			each = append(each, fmt.Sprintf("%.2f", c.Seconds()))
			apiCPU += c
		}
		rate, p50, p99, per := "–", "–", "–", "–"
		if r.load.answers > 0 {
			rate = fmt.Sprintf("%.0f", float64(r.load.answers)/r.load.took.Seconds())
			p50 = fmtDur(percentile(r.load.latencies, 0.50))
			p99 = fmtDur(percentile(r.load.latencies, 0.99))
			perK := func(d time.Duration) float64 { return float64(d.Milliseconds()) / float64(r.load.answers) * 1000 }
			per = fmt.Sprintf("%.0f / %.0f / %.0f", perK(apiCPU), perK(r.primaryCPU), perK(r.standbyCPU))
		}
		fmt.Fprintf(w, "| %s | %s | %s | %d | %s | %s | %s | %.2f | %.2f | %.2f | %s | %s → %s |\n",
			r.setup, r.window, rate, r.load.errors, p50, p99, strings.Join(each, " + "),
			r.primaryCPU.Seconds(), r.standbyCPU.Seconds(), r.selfCPU.Seconds(), per,
			strings.Fields(r.loadBefore)[0], strings.Fields(r.loadAt)[0])
	}
}

func percentile(d []time.Duration, q float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	return s[min(len(s)-1, int(q*float64(len(s))))]
}

func fmtDur(d time.Duration) string {
	if d < 10*time.Millisecond {
		return fmt.Sprintf("%.2f ms", float64(d.Microseconds())/1000)
	}
	return fmt.Sprintf("%.0f ms", float64(d.Microseconds())/1000)
}

// waitReplayed waits until the standby has replayed what the primary
// has written now (the seed).
func waitReplayed(ctx context.Context, primary, standby string) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	p, err := pgx.Connect(ctx, primary)
	if err != nil {
		return fmt.Errorf("connect to the primary: %w", err)
	}
	defer p.Close(ctx)
	s, err := pgx.Connect(ctx, standby)
	if err != nil {
		return fmt.Errorf("connect to the standby: %w", err)
	}
	defer s.Close(ctx)
	var target string
	if err := p.QueryRow(ctx, `SELECT pg_current_wal_insert_lsn()::text`).Scan(&target); err != nil {
		return fmt.Errorf("primary position: %w", err)
	}
	for {
		var done bool
		if err := s.QueryRow(ctx, `SELECT pg_last_wal_replay_lsn() >= $1::pg_lsn`, target).Scan(&done); err != nil {
			return fmt.Errorf("standby position: %w", err)
		}
		if done {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the standby did not replay the seed: %w", ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// postmaster is the pid of the server at url: the parent of a backend.
func postmaster(ctx context.Context, url string) (int, error) {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return 0, fmt.Errorf("connect: %w", err)
	}
	defer conn.Close(ctx)
	var backend int
	if err := conn.QueryRow(ctx, `SELECT pg_backend_pid()`).Scan(&backend); err != nil {
		return 0, fmt.Errorf("backend pid: %w", err)
	}
	_, ppid, ok := stat(backend)
	if !ok {
		return 0, fmt.Errorf("no /proc entry of backend %d (the server must run on this machine)", backend)
	}
	return ppid, nil
}

// cpuByPid is the CPU of a server's processes.
type cpuByPid map[int]time.Duration

// sub is the CPU spent since before by the processes alive now; one
// started in between counts whole, one that ended in between not at all.
func (c cpuByPid) sub(before cpuByPid) time.Duration {
	var d time.Duration
	for pid, t := range c {
		d += t - before[pid]
	}
	return d
}

// serverCPU reads the CPU of the postmaster pm and of its children.
func serverCPU(pm int) cpuByPid {
	out := cpuByPid{pm: procCPU(pm)}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return out
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if cpu, ppid, ok := stat(pid); ok && ppid == pm {
			out[pid] = cpu
		}
	}
	return out
}

// stat reads a process's user+system CPU and its parent from /proc.
func stat(pid int) (cpu time.Duration, ppid int, ok bool) {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0, 0, false
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	if len(f) < 13 {
		return 0, 0, false
	}
	ppid, _ = strconv.Atoi(f[1])
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * time.Second / 100, ppid, true // USER_HZ
}

func procCPU(pid int) time.Duration {
	cpu, _, _ := stat(pid)
	return cpu
}

func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "n/a n/a n/a"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "n/a n/a n/a"
	}
	return strings.Join(f[:3], " ")
}

func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("free port: %w", err)
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// harness is the testing.TB testkit/pgstandby needs, outside a test:
// Fatalf and Skipf end the run, Cleanup's functions run at its end.
type harness struct {
	testing.TB // only the methods below are called
	mu         sync.Mutex
	cleanups   []func()
}

type fatal string

func (h *harness) Helper()                         {}
func (h *harness) Logf(format string, args ...any) { fmt.Fprintf(os.Stderr, format+"\n", args...) }
func (h *harness) Fatalf(format string, args ...any) {
	panic(fatal(fmt.Sprintf(format, args...)))
}
func (h *harness) Skipf(format string, args ...any) {
	panic(fatal(fmt.Sprintf(format, args...)))
}
func (h *harness) Cleanup(f func()) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.cleanups = append(h.cleanups, f)
}

// close runs the cleanups, last first, once.
func (h *harness) close() {
	h.mu.Lock()
	fs := h.cleanups
	h.cleanups = nil
	h.mu.Unlock()
	for i := len(fs) - 1; i >= 0; i-- {
		fs[i]()
	}
}
