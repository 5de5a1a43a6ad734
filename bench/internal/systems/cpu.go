package systems

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

// CPUOf is a process's CPU time (user + system, all threads) so far.
func CPUOf(fs procfs.FS, pid int) (time.Duration, error) {
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

// BackendCPU adds up the CPU the Postgres backends of one database spend
// (the service's connections and autovacuum workers there), without
// pg_stat_statements: it lists the database's backends in pg_stat_activity
// and reads each one's /proc/<pid>/stat, which needs Postgres on this
// machine. A backend's CPU counts from the first sample (or from its start,
// for one that appeared later) to the latest sample, while it lives.
//
// A backend that exits is counted through the postmaster instead: the
// kernel adds a child's whole CPU to its parent's cutime and cstime when
// the parent reaps it, and the postmaster's own utime and stime are the
// forks. A service that opens and closes connections (Miniflux keeps one
// idle connection, DATABASE_MIN_CONNS, and its 16 workers open the rest
// for each statement) spends most of its Postgres CPU in backends that
// live for milliseconds, which sampling alone never sees (its Postgres CPU
// per poll read 0.46 ms in one run and 7.5 ms in another,
// bench/polling/README.md). The postmaster's figures are the whole
// server's: the run must be the only one making connections there, and
// other databases' long-lived backends, which do not exit, add nothing.
type BackendCPU struct {
	fs       procfs.FS
	conn     *pgx.Conn // to another database, so it is not counted
	database string

	// Exclude are backends of the database that are the benchmark's own
	// (its schedule sampler), not the measured service's.
	Exclude map[int32]bool

	mu sync.Mutex
	// app is each backend's application_name: feedsvc names its
	// connections after the process (database.AppName).
	app   map[int]string
	first map[int]time.Duration
	last  map[int]time.Duration
	// alive are the backends the latest sample saw.
	alive map[int]bool
	// postmaster is the backends' parent; exitedFirst and exitedLast its
	// children's CPU (cutime + cstime) and its own (utime + stime) at the
	// base sample and the latest.
	postmaster              int
	exitedFirst, exitedLast time.Duration
	// outside is the oldest write transaction of another database seen:
	// the event store's readers wait behind any transaction on the server
	// (see "Keep transactions short" in docs/operating.md), so another session's
	// long transaction stalls the run.
	outside time.Duration
}

func NewBackendCPU(ctx context.Context, adminDSN, database string) (*BackendCPU, error) {
	fs, err := procfs.NewDefaultFS()
	if err != nil {
		return nil, fmt.Errorf("open /proc: %w", err)
	}
	conn, err := pgx.Connect(ctx, adminDSN)
	if err != nil {
		return nil, fmt.Errorf("connect to count backends: %w", err)
	}
	b := &BackendCPU{fs: fs, conn: conn, database: database, Exclude: map[int32]bool{}}
	b.Reset()
	return b, nil
}

func (b *BackendCPU) Close() { _ = b.conn.Close(context.Background()) }

// Reset starts counting from now: the next sample is every backend's base.
func (b *BackendCPU) Reset() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.first, b.last, b.alive, b.outside = nil, map[int]time.Duration{}, map[int]bool{}, 0
}

// OutsideTransaction is the oldest write transaction of another database
// seen since Reset.
func (b *BackendCPU) OutsideTransaction() time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.outside
}

// Sample reads every backend of the database once.
func (b *BackendCPU) Sample(ctx context.Context) error {
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
	b.alive = map[int]bool{}
	for _, pid := range pids {
		if b.Exclude[pid] {
			continue
		}
		cpu, err := CPUOf(b.fs, int(pid))
		if err != nil {
			continue // exited since the listing
		}
		if b.postmaster == 0 {
			if p, err := b.fs.Proc(int(pid)); err == nil {
				if st, err := p.Stat(); err == nil {
					b.postmaster = st.PPID
				}
			}
		}
		b.alive[int(pid)] = true
		if _, known := b.first[int(pid)]; !known {
			if base {
				b.first[int(pid)] = cpu
			} else {
				b.first[int(pid)] = 0 // started during the run
			}
		}
		b.last[int(pid)] = cpu
	}
	if b.postmaster != 0 {
		if exited, err := postmasterCPU(b.fs, b.postmaster); err == nil {
			if base || b.exitedFirst == 0 {
				b.exitedFirst = exited
			}
			b.exitedLast = exited
		}
	}
	return nil
}

// postmasterCPU is the CPU of the postmaster's reaped children (the
// backends that exited) and its own.
func postmasterCPU(fs procfs.FS, pid int) (time.Duration, error) {
	p, err := fs.Proc(pid)
	if err != nil {
		return 0, fmt.Errorf("postmaster %d: %w", pid, err)
	}
	st, err := p.Stat()
	if err != nil {
		return 0, fmt.Errorf("stat of postmaster %d: %w", pid, err)
	}
	ticks := st.CUTime + st.CSTime + int(st.UTime) + int(st.STime)
	return time.Duration(ticks) * time.Second / userHZ, nil
}

// userHZ is the kernel's clock ticks per second in /proc (procfs assumes
// the same).
const userHZ = 100

// Transactions is how many transactions the database has committed or
// rolled back. Backends report them about once a second, so a count taken
// right after a run misses up to a second's worth.
func (b *BackendCPU) Transactions(ctx context.Context) (int64, error) {
	var n int64
	err := b.conn.QueryRow(ctx, `SELECT coalesce(sum(xact_commit + xact_rollback), 0)::bigint FROM pg_stat_database WHERE datname = $1`,
		b.database).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("count transactions: %w", err)
	}
	return n, nil
}

// Total is the CPU spent between the base sample and the latest ones,
// and how many backends were seen.
func (b *BackendCPU) Total() (time.Duration, int) {
	live, exited := b.Split()
	b.mu.Lock()
	defer b.mu.Unlock()
	return live + exited, len(b.last)
}

// Split is Total in two: the backends alive at the latest sample, from
// their samples, and the ones that exited, from the postmaster's (their
// whole CPU, counted when reaped, less what a backend already alive at the
// base sample had spent by then: a pool that replaces its connections now
// and then would otherwise bring their past into the window).
func (b *BackendCPU) Split() (live, exited time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	exited = b.exitedLast - b.exitedFirst
	for pid, last := range b.last {
		if b.alive[pid] {
			live += last - b.first[pid]
		} else {
			exited -= b.first[pid]
		}
	}
	return live, max(exited, 0)
}

// Sampled is the CPU every backend seen spent between the base sample
// and the last sample it was seen in, exited ones included, and how many
// were seen: what sampling alone sees (no postmaster), for a service
// whose connections live across samples.
func (b *BackendCPU) Sampled() (time.Duration, int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	var sum time.Duration
	for pid, last := range b.last {
		sum += last - b.first[pid]
	}
	return sum, len(b.last)
}

// TotalOf is the part of Total spent by the backends of the given
// processes of the service (named in their application_name).
func (b *BackendCPU) TotalOf(pids []int) time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	var sum time.Duration
	for pid, last := range b.last {
		if !b.alive[pid] {
			continue // counted, without its process, in Total's exited share
		}
		for _, p := range pids {
			if strings.Contains(b.app[pid], "-"+strconv.Itoa(p)+"-") {
				sum += last - b.first[pid]
				break
			}
		}
	}
	return sum
}

// Run samples every interval until ctx ends.
func (b *BackendCPU) Run(ctx context.Context, interval time.Duration) {
	Every(ctx, interval, func() { _ = b.Sample(ctx) })
}

// Every calls f every interval until ctx ends.
func Every(ctx context.Context, interval time.Duration, f func()) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			f()
		}
	}
}
