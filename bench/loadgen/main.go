// Command loadgen is a fixed-rate (open-loop) HTTP load generator.
//
// Request i is due at start + i/rate whether or not earlier requests have
// answered, and its latency is measured from that scheduled time, not from
// the moment a worker got round to sending it. A server that stalls
// therefore shows up in the percentiles as the queue it causes (no
// coordinated omission). Workers only cap how many requests are in flight;
// when all are busy, due requests wait and the wait counts as latency.
//
//	go run ./bench/loadgen -url http://127.0.0.1:8080/feeds/news \
//	    -header "Authorization: Bearer $KEY" -rate 1000 -duration 30s
//
// Every run is bounded twice: by -duration and by -max requests.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime/pprof"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Hard ceilings so a typo cannot start an unbounded run.
const (
	maxDuration = 10 * time.Minute
	maxRequests = 10_000_000
)

type headers []string

func (h *headers) String() string     { return strings.Join(*h, ", ") }
func (h *headers) Set(v string) error { *h = append(*h, v); return nil }

type config struct {
	url        string
	method     string
	rate       float64
	duration   time.Duration
	warmup     time.Duration
	workers    int
	max        int
	timeout    time.Duration
	headers    http.Header
	host       string
	cpuprofile string
}

func main() {
	cfg, err := parseFlags(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "loadgen:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if cfg.cpuprofile != "" {
		f, err := os.Create(cfg.cpuprofile)
		if err != nil {
			fmt.Fprintln(os.Stderr, "loadgen:", err)
			os.Exit(1)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintln(os.Stderr, "loadgen:", err)
			os.Exit(1)
		}
		defer f.Close()
		defer pprof.StopCPUProfile()
	}
	res := run(ctx, cfg)
	res.print(os.Stdout, cfg)
	if res.completed == 0 {
		stop()
		pprof.StopCPUProfile()
		os.Exit(1)
	}
}

func parseFlags(args []string) (config, error) {
	fs := flag.NewFlagSet("loadgen", flag.ContinueOnError)
	var hs headers
	cfg := config{}
	fs.StringVar(&cfg.url, "url", "", "target URL (required)")
	fs.StringVar(&cfg.method, "method", http.MethodGet, "HTTP method")
	fs.Float64Var(&cfg.rate, "rate", 100, "requests per second, fixed schedule")
	fs.DurationVar(&cfg.duration, "duration", 10*time.Second, "measured duration (at most 10m)")
	fs.DurationVar(&cfg.warmup, "warmup", 0, "duration sent at the same rate before measuring, not recorded")
	fs.IntVar(&cfg.workers, "workers", 0, "cap on requests in flight (default: enough for 250ms at -rate, at least 16, at most 2048)")
	fs.IntVar(&cfg.max, "max", 0, "cap on measured requests (default rate*duration, at most 10,000,000)")
	fs.DurationVar(&cfg.timeout, "timeout", 10*time.Second, "per-request timeout (counted as an error)")
	fs.Var(&hs, "header", `request header "Name: value" (repeatable)`)
	fs.StringVar(&cfg.cpuprofile, "cpuprofile", "", "write the generator's own CPU profile here")
	if err := fs.Parse(args); err != nil {
		return cfg, err
	}
	if cfg.url == "" {
		return cfg, errors.New("-url is required")
	}
	if cfg.rate <= 0 || cfg.rate > 1_000_000 {
		return cfg, errors.New("-rate must be in (0, 1e6]")
	}
	if cfg.duration <= 0 || cfg.duration > maxDuration {
		return cfg, fmt.Errorf("-duration must be in (0, %s]", maxDuration)
	}
	if cfg.warmup < 0 || cfg.warmup > time.Minute {
		return cfg, errors.New("-warmup must be in [0, 1m]")
	}
	planned := int(cfg.rate * cfg.duration.Seconds())
	if cfg.max <= 0 || cfg.max > planned {
		cfg.max = planned
	}
	cfg.max = min(cfg.max, maxRequests)
	if cfg.max <= 0 {
		return cfg, errors.New("rate*duration is less than one request")
	}
	if cfg.workers <= 0 {
		cfg.workers = min(max(16, int(cfg.rate/4)), 2048)
	}
	cfg.headers = http.Header{}
	for _, h := range hs {
		name, value, ok := strings.Cut(h, ":")
		if !ok || strings.TrimSpace(name) == "" {
			return cfg, fmt.Errorf("-header %q is not \"Name: value\"", h)
		}
		name, value = strings.TrimSpace(name), strings.TrimSpace(value)
		if strings.EqualFold(name, "Host") {
			cfg.host = value
			continue
		}
		cfg.headers.Add(name, value)
	}
	return cfg, nil
}

// slot is the outcome of one scheduled request.
type slot struct {
	latency time.Duration // from scheduled time to body read
	lag     time.Duration // from scheduled time to send
	status  int           // 0 when the request failed
	err     string
}

type result struct {
	slots     []slot
	completed int
	elapsed   time.Duration // from first scheduled send to last completion
}

func newClient(cfg config) *http.Client {
	tr := &http.Transport{
		Proxy:               nil,
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        cfg.workers,
		MaxIdleConnsPerHost: cfg.workers,
		MaxConnsPerHost:     cfg.workers,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
		ForceAttemptHTTP2:   false,
	}
	return &http.Client{Transport: tr, Timeout: cfg.timeout}
}

func run(ctx context.Context, cfg config) result {
	client := newClient(cfg)
	defer client.CloseIdleConnections()
	interval := time.Duration(float64(time.Second) / cfg.rate)
	warm := int(cfg.warmup.Seconds() * cfg.rate)
	total := warm + cfg.max
	slots := make([]slot, cfg.max)
	done := make([]bool, cfg.max)

	// The schedule starts a little in the future so every worker is parked
	// before the first request is due.
	start := time.Now().Add(20 * time.Millisecond)
	deadline := start.Add(time.Duration(total)*interval + cfg.timeout + time.Second)
	ctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()

	var (
		next     atomic.Int64
		wg       sync.WaitGroup
		lastDone atomic.Int64
	)
	for range cfg.workers {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= total || ctx.Err() != nil {
					return
				}
				due := start.Add(time.Duration(i) * interval)
				if d := time.Until(due); d > 0 {
					t := time.NewTimer(d)
					select {
					case <-t.C:
					case <-ctx.Done():
						t.Stop()
						return
					}
				}
				s := send(ctx, client, cfg, due)
				if i < warm {
					continue
				}
				slots[i-warm] = s
				done[i-warm] = true
				now := time.Now().UnixNano()
				for {
					prev := lastDone.Load()
					if now <= prev || lastDone.CompareAndSwap(prev, now) {
						break
					}
				}
			}
		})
	}
	wg.Wait()

	// A request the run ended before answering (or sending) still counts:
	// as an error, with the time it had waited as a lower bound on its
	// latency. Dropping it would flatter the percentiles.
	end := time.Now()
	res := result{slots: slots}
	for i := range slots {
		if done[i] {
			res.completed++
			continue
		}
		due := start.Add(time.Duration(warm+i) * interval)
		slots[i] = slot{latency: max(end.Sub(due), 0), err: errUnfinished}
	}
	measuredStart := start.Add(time.Duration(warm) * interval)
	if ld := lastDone.Load(); ld > 0 {
		res.elapsed = time.Unix(0, ld).Sub(measuredStart)
	}
	return res
}

const errUnfinished = "unfinished when the run ended"

func send(ctx context.Context, client *http.Client, cfg config, due time.Time) slot {
	req, err := http.NewRequestWithContext(ctx, cfg.method, cfg.url, nil)
	if err != nil {
		return slot{latency: time.Since(due), err: "build request: " + err.Error()}
	}
	req.Header = cfg.headers.Clone()
	if cfg.host != "" {
		req.Host = cfg.host
	}
	lag := time.Since(due)
	resp, err := client.Do(req)
	if err != nil {
		return slot{latency: time.Since(due), lag: lag, err: classify(err)}
	}
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	s := slot{latency: time.Since(due), lag: lag, status: resp.StatusCode}
	if err != nil {
		s.status, s.err = 0, "read body: "+classify(err)
	}
	return s
}

func classify(err error) string {
	var ne net.Error
	switch {
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return "timeout"
	case errors.Is(err, context.Canceled):
		return "canceled"
	}
	msg := err.Error()
	if i := strings.LastIndex(msg, ": "); i >= 0 {
		msg = msg[i+2:]
	}
	return msg
}

func (r result) print(w io.Writer, cfg config) {
	lat := make([]time.Duration, 0, len(r.slots))
	lag := make([]time.Duration, 0, len(r.slots))
	statuses := map[string]int{}
	errs := 0
	for _, s := range r.slots {
		lat = append(lat, s.latency)
		if s.err != errUnfinished {
			lag = append(lag, s.lag)
		}
		switch {
		case s.err != "":
			statuses["error: "+s.err]++
			errs++
		default:
			statuses[fmt.Sprintf("%d", s.status)]++
			if s.status >= 400 {
				errs++
			}
		}
	}
	slices.Sort(lat)
	slices.Sort(lag)
	// Achieved counts answers (any status), not failures.
	answered := 0
	for _, s := range r.slots {
		if s.status > 0 {
			answered++
		}
	}
	achieved := 0.0
	if r.elapsed > 0 {
		achieved = float64(answered) / r.elapsed.Seconds()
	}
	fmt.Fprintf(w, "target      %s %s\n", cfg.method, cfg.url)
	fmt.Fprintf(w, "schedule    %.0f req/s for %s (+%s warm-up), %d planned, %d workers max\n",
		cfg.rate, cfg.duration, cfg.warmup, cfg.max, cfg.workers)
	fmt.Fprintf(w, "completed   %d of %d in %s (%d answered), achieved %.1f answers/s\n",
		r.completed, len(r.slots), r.elapsed.Round(time.Millisecond), answered, achieved)
	keys := make([]string, 0, len(statuses))
	for k := range statuses {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s=%d", k, statuses[k]))
	}
	fmt.Fprintf(w, "status      %s (errors: %d)\n", strings.Join(parts, " "), errs)
	fmt.Fprintf(w, "latency     p50 %s  p90 %s  p99 %s  p99.9 %s  max %s  (from scheduled send)\n",
		ms(pct(lat, 0.50)), ms(pct(lat, 0.90)), ms(pct(lat, 0.99)), ms(pct(lat, 0.999)), ms(pct(lat, 1)))
	fmt.Fprintf(w, "send lag    p50 %s  p99 %s  max %s  (scheduled -> sent; large means the generator or worker cap fell behind)\n",
		ms(pct(lag, 0.50)), ms(pct(lag, 0.99)), ms(pct(lag, 1)))
	fmt.Fprintf(w, "summary     rate=%.0f achieved=%.1f n=%d/%d errors=%d p50=%s p90=%s p99=%s p99.9=%s max=%s\n",
		cfg.rate, achieved, r.completed, len(r.slots), errs,
		ms(pct(lat, 0.50)), ms(pct(lat, 0.90)), ms(pct(lat, 0.99)), ms(pct(lat, 0.999)), ms(pct(lat, 1)))
}

// pct is the nearest-rank percentile of sorted values.
func pct(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(float64(len(sorted))*p+0.999999) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2fms", float64(d)/float64(time.Millisecond)) }
