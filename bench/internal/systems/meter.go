package systems

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/prometheus/procfs"
)

// Meter counts, over a window, the CPU of a system's processes and of its
// database's Postgres backends (sampled every interval, cpu.go), and the
// processes' peak resident memory.
type Meter struct {
	sys          *System
	cpu          *BackendCPU
	fs           procfs.FS
	svc0, crawl0 time.Duration
	halt         atomic.Bool
	done         chan struct{}
	peak         atomic.Int64
}

// Usage is what a Meter counted.
type Usage struct {
	// Service is the CPU of every process of the system, Crawlers that
	// of its crawler-only processes (a part of Service).
	Service, Crawlers time.Duration
	// PGLive and PGExited are the Postgres backends' CPU (BackendCPU's
	// Split), PGCrawlers the part of PGLive of the crawler processes.
	PGLive, PGExited, PGCrawlers time.Duration
	PeakRSS                      int64
}

// PG is the Postgres backends' CPU.
func (u Usage) PG() time.Duration { return u.PGLive + u.PGExited }

// StartMeter starts counting now (cpu's base is taken again).
func (s *System) StartMeter(ctx context.Context, cpu *BackendCPU, interval time.Duration) (*Meter, error) {
	fs, err := procfs.NewDefaultFS()
	if err != nil {
		return nil, fmt.Errorf("open /proc: %w", err)
	}
	m := &Meter{sys: s, cpu: cpu, fs: fs, done: make(chan struct{})}
	cpu.Reset()
	if err := cpu.Sample(ctx); err != nil {
		return nil, err
	}
	if m.svc0, m.crawl0, err = s.CPU(fs); err != nil {
		return nil, err
	}
	// The sampling stops between samples, not by cancelling one: pgx
	// closes a connection whose query is cancelled.
	go func() {
		defer close(m.done)
		for !m.halt.Load() {
			_ = cpu.Sample(ctx)
			m.peak.Store(max(m.peak.Load(), s.RSS(fs)))
			time.Sleep(interval)
		}
	}()
	return m, nil
}

// Stop ends the window and returns what it counted.
func (m *Meter) Stop(ctx context.Context) (Usage, error) {
	m.halt.Store(true)
	<-m.done
	svc1, crawl1, err := m.sys.CPU(m.fs)
	if err != nil {
		return Usage{}, err
	}
	_ = m.cpu.Sample(ctx)
	u := Usage{Service: svc1 - m.svc0, Crawlers: crawl1 - m.crawl0, PeakRSS: m.peak.Load()}
	u.PGLive, u.PGExited = m.cpu.Split()
	if len(m.sys.Crawlers) > 0 {
		u.PGCrawlers = m.cpu.TotalOf(m.sys.CrawlerPids())
	}
	return u, nil
}
