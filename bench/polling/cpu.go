package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/prometheus/procfs"
)

// cpuOf is a process's CPU time (user + system, all threads) so far.
func cpuOf(fs procfs.FS, pid int) (time.Duration, error) {
	p, err := fs.Proc(pid)
	if err != nil {
		return 0, fmt.Errorf("process %d: %w", pid, err)
	}
	st, err := p.Stat()
	if err != nil {
		return 0, fmt.Errorf("stat of process %d: %w", pid, err)
	}
	return time.Duration(st.CPUTime() * float64(time.Second)), nil
}

// backendCPU adds up the CPU the Postgres backends of one database spend
// (the service's connections and autovacuum workers there), without
// pg_stat_statements: it lists the database's backends in pg_stat_activity
// and reads each one's /proc/<pid>/stat, which needs Postgres on this
// machine. A backend's CPU counts from the first sample (or from its start,
// for one that appeared later) to the last sample it was seen in, so a
// backend that exits loses at most one sampling interval of its CPU.
type backendCPU struct {
	fs       procfs.FS
	conn     *pgx.Conn // to another database, so it is not counted
	database string

	// exclude are backends of the database that are the benchmark's own
	// (its schedule sampler), not the measured service's.
	exclude map[int32]bool

	mu sync.Mutex
	// app is each backend's application_name: feedsvc names its
	// connections after the process (database.AppName).
	app   map[int]string
	first map[int]time.Duration
	last  map[int]time.Duration
	// outside is the oldest write transaction of another database seen:
	// the event store's readers wait behind any transaction on the server
	// (see "Keep transactions short" in docs/operating.md), so another session's
	// long transaction stalls the run.
	outside time.Duration
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
	b := &backendCPU{fs: fs, conn: conn, database: database, exclude: map[int32]bool{}}
	b.reset()
	return b, nil
}

func (b *backendCPU) close() { _ = b.conn.Close(context.Background()) }

// reset starts counting from now: the next sample is every backend's base.
func (b *backendCPU) reset() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.first, b.last, b.outside = nil, map[int]time.Duration{}, 0
}

// outsideTransaction is the oldest write transaction of another database
// seen since reset.
func (b *backendCPU) outsideTransaction() time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.outside
}

// sample reads every backend of the database once.
func (b *backendCPU) sample(ctx context.Context) error {
	rows, err := b.conn.Query(ctx, `SELECT pid, coalesce(application_name, '') FROM pg_stat_activity WHERE datname = $1`, b.database)
	if err != nil {
		return fmt.Errorf("list backends: %w", err)
	}
	var pids []int32
	apps := map[int]string{}
	for rows.Next() {
		var pid int32
		var app string
		if err := rows.Scan(&pid, &app); err != nil {
			return fmt.Errorf("list backends: %w", err)
		}
		pids = append(pids, pid)
		apps[int(pid)] = app
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("list backends: %w", err)
	}
	var oldest float64
	err = b.conn.QueryRow(ctx, `SELECT coalesce(max(extract(epoch FROM now() - xact_start)), 0)::float8 FROM pg_stat_activity
		WHERE datname IS DISTINCT FROM $1 AND backend_xid IS NOT NULL AND pid <> pg_backend_pid()`, b.database).Scan(&oldest)
	if err != nil {
		return fmt.Errorf("find other transactions: %w", err)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.outside = max(b.outside, time.Duration(oldest*float64(time.Second)))
	if b.app == nil {
		b.app = map[int]string{}
	}
	for pid, app := range apps {
		b.app[pid] = app
	}
	base := b.first == nil
	if base {
		b.first = map[int]time.Duration{}
	}
	for _, pid := range pids {
		if b.exclude[pid] {
			continue
		}
		cpu, err := cpuOf(b.fs, int(pid))
		if err != nil {
			continue // exited since the listing
		}
		if _, known := b.first[int(pid)]; !known {
			if base {
				b.first[int(pid)] = cpu
			} else {
				b.first[int(pid)] = 0 // started during the run
			}
		}
		b.last[int(pid)] = cpu
	}
	return nil
}

// transactions is how many transactions the database has committed or
// rolled back. Backends report them about once a second, so a count taken
// right after a run misses up to a second's worth.
func (b *backendCPU) transactions(ctx context.Context) (int64, error) {
	var n int64
	err := b.conn.QueryRow(ctx, `SELECT coalesce(sum(xact_commit + xact_rollback), 0)::bigint FROM pg_stat_database WHERE datname = $1`,
		b.database).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("count transactions: %w", err)
	}
	return n, nil
}

// total is the CPU spent between the base sample and the latest ones.
func (b *backendCPU) total() (time.Duration, int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	var sum time.Duration
	for pid, last := range b.last {
		sum += last - b.first[pid]
	}
	return sum, len(b.last)
}

// totalOf is the part of total spent by the backends of the given
// processes of the service (named in their application_name).
func (b *backendCPU) totalOf(pids []int) time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	var sum time.Duration
	for pid, last := range b.last {
		for _, p := range pids {
			if strings.Contains(b.app[pid], "-"+strconv.Itoa(p)+"-") {
				sum += last - b.first[pid]
				break
			}
		}
	}
	return sum
}

// run samples every interval until ctx ends.
func (b *backendCPU) run(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			_ = b.sample(ctx)
		}
	}
}
