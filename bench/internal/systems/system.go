// Package systems runs the services the benchmarks measure side by side
// (`feedsvc serve` from a built binary, Miniflux built from its source),
// each on a database of its own on the machine's Postgres: starting them,
// attaching a fake web's sites through their APIs, waiting until every
// source has been polled once, and counting the CPU of their processes
// and of their Postgres backends (cpu.go).
package systems

import (
	"bytes"
	"context"
	"fmt"
	"log"
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/procfs"
)

// System is a running service under measurement.
type System struct {
	Name string
	Cmd  *exec.Cmd
	// Crawlers are feedsvc's crawler-only processes, beside Cmd.
	Crawlers []*exec.Cmd
	out      *LockedWriter
	buf      bytes.Buffer
	DB, DSN  string
	// Table is the schedule: id, last poll, next due (ScheduleSampler).
	Table string
	// Backfills, when set, counts the attachments whose backfill is
	// done: the setup waits for all of them, so that no measured window
	// holds the tail of the setup's backfills.
	Backfills string
	// Drained, when set, counts the sources whose last crawl left no
	// backlog (a crawl fetches at most a bounded number of pages and the
	// next goes on): the setup waits for all of them too, so that no
	// measured window holds the initial crawl's tail (at 10,000 sites,
	// a busy site's 1,000 listed articles each).
	Drained string
	// Attach attaches one site (by host) through the API.
	Attach func(ctx context.Context, host string) error
	// Flush ends the attaching, for a system that attaches in batches.
	Flush func(context.Context) error
	// AddCrawler starts one more crawler-only process (feedsvc).
	AddCrawler func() error
}

func newSystem(name, dsn, db string) *System {
	s := &System{Name: name, DSN: dsn, DB: db}
	s.out = &LockedWriter{W: &s.buf}
	return s
}

// Output is what the system's processes printed so far (its end).
func (s *System) Output() string {
	s.out.mu.Lock()
	defer s.out.mu.Unlock()
	return Tail(s.buf.String())
}

func (s *System) start(cmd *exec.Cmd) error {
	cmd.Stdout, cmd.Stderr = s.out, s.out
	return cmd.Start()
}

// Pids are the system's processes.
func (s *System) Pids() []int {
	out := []int{s.Cmd.Process.Pid}
	return append(out, s.CrawlerPids()...)
}

// CrawlerPids are the crawler-only processes.
func (s *System) CrawlerPids() []int {
	var out []int
	for _, c := range s.Crawlers {
		out = append(out, c.Process.Pid)
	}
	return out
}

// CPU is the CPU time of every process of the system so far, and of its
// crawler-only processes.
func (s *System) CPU(fs procfs.FS) (all, crawlers time.Duration, err error) {
	for i, pid := range s.Pids() {
		d, err := CPUOf(fs, pid)
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

// RSS is the resident memory of the system's processes now.
func (s *System) RSS(fs procfs.FS) int64 {
	var rss int64
	for _, pid := range s.Pids() {
		if p, err := fs.Proc(pid); err == nil {
			if st, err := p.Stat(); err == nil {
				rss += int64(st.ResidentMemory())
			}
		}
	}
	return rss
}

// Stop interrupts every process and waits for it (20 s, then kills it).
func (s *System) Stop() {
	for _, cmd := range append([]*exec.Cmd{s.Cmd}, s.Crawlers...) {
		if cmd != nil && cmd.Process != nil {
			StopProcess(cmd, 20*time.Second)
		}
	}
}

// StopProcess interrupts a started process and waits for it to end, for
// grace, then kills it.
func StopProcess(cmd *exec.Cmd, grace time.Duration) {
	_ = cmd.Process.Signal(os.Interrupt)
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(grace):
		_ = cmd.Process.Kill()
		<-done
	}
}

// SetupOptions shape Setup.
type SetupOptions struct {
	// Attachers is how many attach requests run at once.
	Attachers int
	// Backfills is how many finished backfills to wait for, when the
	// system counts them (default: one per host).
	Backfills int
	// Settle is the wait after the setup, for its item appends and
	// projections to end.
	Settle time.Duration
}

// Setup attaches every host, waits until each source has been polled once
// (through sampler, which reads s.Table) and, where the system counts
// them, until every backfill and every initial crawl is done, runs VACUUM ANALYZE (autovacuum is
// off on the machine's server) and settles. It returns the time until
// every source had been polled once.
func (s *System) Setup(ctx context.Context, hosts []string, sampler *ScheduleSampler, o SetupOptions) (time.Duration, error) {
	start := time.Now()
	log.Printf("%s: attaching %d sources", s.Name, len(hosts))
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, max(o.Attachers, 1)+1)
	for range max(o.Attachers, 1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= len(hosts) {
					return
				}
				if err := s.Attach(ctx, hosts[i]); err != nil {
					errs <- fmt.Errorf("attach %s: %w", hosts[i], err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if s.Flush != nil {
		if err := s.Flush(ctx); err != nil {
			errs <- fmt.Errorf("attach: %w", err)
		}
	}
	select {
	case err := <-errs:
		return 0, fmt.Errorf("%w\n%s", err, s.Output())
	default:
	}
	log.Printf("%s: attached in %v; waiting for every source's first poll", s.Name, time.Since(start).Round(time.Second))
	last := time.Now()
	for {
		polled, err := sampler.PolledOnce(ctx)
		if err != nil {
			return 0, err
		}
		if polled >= len(hosts) {
			break
		}
		if time.Since(start) > 30*time.Minute {
			return 0, fmt.Errorf("only %d of %d sources polled after 30 min\n%s", polled, len(hosts), s.Output())
		}
		if time.Since(last) > time.Minute {
			log.Printf("%s: %d of %d sources polled once", s.Name, polled, len(hosts))
			last = time.Now()
		}
		if err := Sleep(ctx, 2*time.Second); err != nil {
			return 0, err
		}
	}
	setup := time.Since(start)
	log.Printf("%s: every source polled once after %v", s.Name, setup.Round(time.Second))
	if s.Backfills != "" {
		want := o.Backfills
		if want == 0 {
			want = len(hosts)
		}
		if err := WaitCount(ctx, s.DSN, s.Backfills, want, 60*time.Minute); err != nil {
			return 0, fmt.Errorf("backfills: %w\n%s", err, s.Output())
		}
		log.Printf("%s: every backfill done after %v", s.Name, time.Since(start).Round(time.Second))
	}
	if s.Drained != "" {
		if err := WaitCount(ctx, s.DSN, s.Drained, len(hosts), 60*time.Minute); err != nil {
			return 0, fmt.Errorf("initial crawls: %w\n%s", err, s.Output())
		}
		log.Printf("%s: every source's initial crawl done after %v", s.Name, time.Since(start).Round(time.Second))
	}
	if err := VacuumAnalyze(ctx, s.DSN); err != nil {
		return 0, err
	}
	log.Printf("%s: settling for %v", s.Name, o.Settle)
	return setup, Sleep(ctx, o.Settle)
}

// Sleep waits d, or until ctx ends (its error).
func Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
