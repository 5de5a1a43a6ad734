package main

import (
	"context"
	"fmt"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/prometheus/procfs"
)

// backendCPU adds up the CPU the Postgres backends of one database spend,
// as bench/ingest does: it lists the database's backends in
// pg_stat_activity and reads each one's /proc/<pid>/stat (Postgres must run
// on this machine). A backend counts from the first sample (or from its
// start, for one that appeared later) to the last sample it was seen in.
type backendCPU struct {
	fs       procfs.FS
	conn     *pgx.Conn // to another database, so it is not counted
	database string

	mu    sync.Mutex
	first map[int]time.Duration
	last  map[int]time.Duration
}

func newBackendCPU(ctx context.Context, adminDSN, database string) (*backendCPU, error) {
	fs, err := procfs.NewDefaultFS()
	if err != nil {
		return nil, fmt.Errorf("open /proc: %w", err)
	}
	conn, err := pgx.Connect(ctx, adminDSN)
	if err != nil {
		return nil, fmt.Errorf("connect to count backends: %w", err)
	}
	return &backendCPU{fs: fs, conn: conn, database: database, last: map[int]time.Duration{}}, nil
}

func (b *backendCPU) close() { _ = b.conn.Close(context.Background()) }

// reset starts counting from now.
func (b *backendCPU) reset() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.first, b.last = nil, map[int]time.Duration{}
}

func (b *backendCPU) sample(ctx context.Context) {
	rows, err := b.conn.Query(ctx, `SELECT pid FROM pg_stat_activity WHERE datname = $1`, b.database)
	if err != nil {
		return
	}
	pids, err := pgx.CollectRows(rows, pgx.RowTo[int32])
	if err != nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	base := b.first == nil
	if base {
		b.first = map[int]time.Duration{}
	}
	for _, pid := range pids {
		p, err := b.fs.Proc(int(pid))
		if err != nil {
			continue
		}
		st, err := p.Stat()
		if err != nil {
			continue // exited since the listing
		}
		cpu := time.Duration(st.CPUTime() * float64(time.Second))
		if _, known := b.first[int(pid)]; !known {
			if base {
				b.first[int(pid)] = cpu
			} else {
				b.first[int(pid)] = 0 // started during the run
			}
		}
		b.last[int(pid)] = cpu
	}
}

// total is the CPU spent between the base sample and the latest ones.
func (b *backendCPU) total() time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	var sum time.Duration
	for pid, last := range b.last {
		sum += last - b.first[pid]
	}
	return sum
}

// measure samples every interval until the returned stop is called, which
// returns the Postgres CPU and this process's CPU over the span.
func (b *backendCPU) measure(ctx context.Context, interval time.Duration) func() (pg, self time.Duration) {
	b.reset()
	b.sample(ctx)
	self0 := selfCPU()
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				b.sample(ctx)
			}
		}
	}()
	return func() (time.Duration, time.Duration) {
		cancel()
		<-done
		b.sample(context.Background())
		return b.total(), selfCPU() - self0
	}
}

// selfCPU is this process's CPU time so far (user + system).
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
