package database

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"
	"github.com/uptrace/bun/schema"
)

// ReplicaPoll is how often a Replica measures the standby's replay.
const ReplicaPoll = 200 * time.Millisecond

// Replica routes the API's reads of the read models to a streaming
// standby while it is reachable and has replayed every write this process
// answered; otherwise to the primary. It is a bun.IDB: the read models'
// queries are built on it once and each query picks its server when it
// is made, so no handler knows there is a replica.
type Replica struct {
	primary     *bun.DB
	primaryPool *pgxpool.Pool
	standby     *bun.DB
	standbyPool *pgxpool.Pool
	// Bound is how long a write waits for the standby to replay it before
	// it is answered anyway, reads falling back to the primary meanwhile.
	Bound  time.Duration
	logger *slog.Logger

	mu sync.Mutex
	// up is whether the last measure of the standby succeeded.
	up  bool
	err error
	// replayed is the standby's last measured replay position; owed the
	// position a write was answered at without the standby having
	// replayed it: reads stay on the primary until replayed reaches it.
	replayed, owed int64
	lagBytes       int64
	// unreplayed are primary positions measured and not yet replayed by
	// the standby, oldest first, with when they were measured: the oldest
	// one's age is the replay lag in time, and past Bound this process
	// reads from the primary, as the process that answered a write in
	// that time does (another API process's write may be among them).
	unreplayed []measured

	lagGauge, lagSecondsGauge, upGauge, fallbackGauge prometheus.Gauge
	fallbacks                                         prometheus.Counter
}

type measured struct {
	at  time.Time
	pos int64
}

// OpenReplica opens a pool on the standby at dsn without waiting for it:
// a standby down at start makes reads fall back, not the process fail.
func OpenReplica(primary *DB, dsn string, bound time.Duration, logger *slog.Logger) (*Replica, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("parse read database url: %w", err)
	}
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		return nil, fmt.Errorf("open read pool: %w", err)
	}
	r := &Replica{
		primary: primary.Bun, primaryPool: primary.Pool,
		standby: bun.NewDB(stdlib.OpenDBFromPool(pool), pgdialect.New()), standbyPool: pool,
		Bound: bound, logger: logger,
		lagGauge: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "feedsvc_replica_replay_lag_bytes", Help: "WAL bytes the read replica has not replayed yet, at the last measure.",
		}),
		lagSecondsGauge: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "feedsvc_replica_replay_lag_seconds",
			Help: "How long ago the primary had written WAL the read replica has not replayed yet (0 when caught up), measured every 200 ms.",
		}),
		upGauge: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "feedsvc_replica_up", Help: "1 when the last measure of the read replica succeeded.",
		}),
		fallbackGauge: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "feedsvc_replica_fallback", Help: "1 while this process serves reads from the primary instead of the replica.",
		}),
		fallbacks: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "feedsvc_replica_write_fallbacks_total", Help: "Writes answered before the replica replayed them, within the bound; reads fell back to the primary.",
		}),
	}
	r.fallbackGauge.Set(1)
	r.standby.AddQueryHook(downOnConnectionError{r})
	return r, nil
}

// downOnConnectionError sends reads to the primary as soon as a query on
// the standby fails for want of a connection, rather than at the next
// measure: reads begun after it do not fail too.
type downOnConnectionError struct{ r *Replica }

func (downOnConnectionError) BeforeQuery(ctx context.Context, _ *bun.QueryEvent) context.Context {
	return ctx
}

func (h downOnConnectionError) AfterQuery(ctx context.Context, e *bun.QueryEvent) {
	var pgErr *pgconn.PgError
	if e.Err == nil || ctx.Err() != nil || errors.Is(e.Err, sql.ErrNoRows) {
		return // the caller gone: not the standby's state
	}
	// The server's own errors say nothing of the standby's state, but for
	// a shutdown (57P01-57P03: a stopping standby ends its sessions so)
	// and a lost connection (class 08).
	if errors.As(e.Err, &pgErr) && !strings.HasPrefix(pgErr.Code, "57P") && !strings.HasPrefix(pgErr.Code, "08") {
		return
	}
	h.r.mu.Lock()
	defer h.r.mu.Unlock()
	if h.r.up {
		h.r.logger.Warn("read replica query failed: reads fall back to the primary", "err", e.Err)
	}
	h.r.up, h.r.err = false, e.Err
	h.r.upGauge.Set(0)
	h.r.setFallbackLocked()
}

// Collectors are the replica's metrics.
func (r *Replica) Collectors() []prometheus.Collector {
	return []prometheus.Collector{r.lagGauge, r.lagSecondsGauge, r.upGauge, r.fallbackGauge, r.fallbacks}
}

// Close releases the standby's connections.
func (r *Replica) Close() {
	_ = r.standby.Close()
	r.standbyPool.Close()
}

// Run measures the standby every ReplicaPoll until ctx ends.
func (r *Replica) Run(ctx context.Context) {
	tick := time.NewTicker(ReplicaPoll)
	defer tick.Stop()
	for {
		r.Measure(ctx)
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// Measure reads the standby's replay position and the primary's WAL
// position once, and records them.
func (r *Replica) Measure(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	replayed, err := r.replayPosition(ctx)
	var current int64
	if err == nil {
		current, err = r.PrimaryPosition(ctx)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	wasUp := r.up
	r.up, r.err = err == nil, err
	if err == nil {
		r.replayed = max(r.replayed, replayed)
		r.lagBytes = max(0, current-replayed)
		r.lagGauge.Set(float64(r.lagBytes))
		r.upGauge.Set(1)
		now := time.Now()
		switch n := len(r.unreplayed); {
		case current <= r.replayed || (n > 0 && r.unreplayed[n-1].pos >= current):
		case n >= 1024:
			// A standby stuck for minutes: the newest measure replaces
			// the last, which only keeps reads on the primary longer.
			r.unreplayed[n-1].pos = current
		default:
			r.unreplayed = append(r.unreplayed, measured{at: now, pos: current})
		}
		for len(r.unreplayed) > 0 && r.unreplayed[0].pos <= r.replayed {
			r.unreplayed = r.unreplayed[1:]
		}
		lag := time.Duration(0)
		if len(r.unreplayed) > 0 {
			lag = now.Sub(r.unreplayed[0].at)
			if lag > r.Bound {
				r.owed = max(r.owed, r.unreplayed[0].pos)
			}
		}
		r.lagSecondsGauge.Set(lag.Seconds())
	} else {
		r.upGauge.Set(0)
	}
	if wasUp && !r.up && ctx.Err() == nil {
		r.logger.Warn("read replica unreachable: reads fall back to the primary", "err", err)
	}
	if !wasUp && r.up {
		r.logger.Info("read replica reachable")
	}
	r.setFallbackLocked()
}

func (r *Replica) setFallbackLocked() {
	if r.usableLocked() {
		r.fallbackGauge.Set(0)
	} else {
		r.fallbackGauge.Set(1)
	}
}

func (r *Replica) usableLocked() bool { return r.up && r.replayed >= r.owed }

// replayPosition is the standby's last replayed WAL position; a server
// that is not replaying (not a standby) is an error, not a position.
func (r *Replica) replayPosition(ctx context.Context) (int64, error) {
	var pos sql.NullInt64
	if err := r.standbyPool.QueryRow(ctx, `SELECT pg_wal_lsn_diff(pg_last_wal_replay_lsn(), '0/0')::bigint`).Scan(&pos); err != nil {
		return 0, fmt.Errorf("read replica replay position: %w", err)
	}
	if !pos.Valid {
		return 0, errors.New("read replica is not a standby: it replays no WAL")
	}
	return pos.Int64, nil
}

// PrimaryPosition is the primary's WAL insert position: with
// synchronous_commit off a commit returns before its record is written,
// so pg_current_wal_lsn() (the write position) can be short of it.
func (r *Replica) PrimaryPosition(ctx context.Context) (int64, error) {
	var pos int64
	if err := r.primaryPool.QueryRow(ctx, `SELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), '0/0')::bigint`).Scan(&pos); err != nil {
		return 0, fmt.Errorf("primary WAL position: %w", err)
	}
	return pos, nil
}

// WaitReplayed waits, up to Bound, until the standby replayed the
// primary's current WAL position: called after a write's projections
// committed, it makes the write visible on the standby. Past the bound,
// or with the standby unreachable, the position is owed: this process
// reads from the primary until the standby reaches it, so the write is
// still reflected by every later read.
func (r *Replica) WaitReplayed(ctx context.Context) error {
	pos, err := r.PrimaryPosition(ctx)
	if err != nil {
		return err
	}
	deadline := time.Now().Add(r.Bound)
	// The standby's answers are bounded too: one that stopped answering
	// (a host gone, not refusing) must not hold the write past the bound.
	bounded, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	for {
		replayed, err := r.replayPosition(bounded)
		if ctx.Err() != nil {
			return fmt.Errorf("wait for the read replica: %w", ctx.Err())
		}
		if err == nil && replayed >= pos {
			r.mu.Lock()
			r.replayed = max(r.replayed, replayed)
			r.setFallbackLocked()
			r.mu.Unlock()
			return nil
		}
		if time.Now().After(deadline) || err != nil {
			r.mu.Lock()
			r.owed = max(r.owed, pos)
			if err != nil {
				r.up, r.err = false, err
				r.upGauge.Set(0)
			}
			r.setFallbackLocked()
			r.mu.Unlock()
			r.fallbacks.Inc()
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("wait for the read replica: %w", ctx.Err())
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// Status is the replica's state at the last measure: nil when reads go
// to it, otherwise why they go to the primary.
func (r *Replica) Status() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case !r.up && r.err != nil:
		return fmt.Errorf("read replica unreachable, reads served by the primary: %w", r.err)
	case !r.up:
		return errors.New("read replica not measured yet, reads served by the primary")
	case r.replayed < r.owed:
		return fmt.Errorf("read replica lagging (%d bytes behind), reads served by the primary", r.lagBytes)
	}
	return nil
}

// OnReplica reports whether queries made now go to the standby.
func (r *Replica) OnReplica() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.usableLocked()
}

func (r *Replica) pick() *bun.DB {
	if r.OnReplica() {
		return r.standby
	}
	return r.primary
}

var _ bun.IDB = (*Replica)(nil)

// The bun.IDB methods: each picks its server when called.

func (r *Replica) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	return r.pick().QueryContext(ctx, query, args...)
}
func (r *Replica) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	// Statements that change rows can only run on the primary.
	return r.primary.ExecContext(ctx, query, args...)
}
func (r *Replica) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	return r.pick().QueryRowContext(ctx, query, args...)
}
func (r *Replica) Dialect() schema.Dialect              { return r.primary.Dialect() }
func (r *Replica) NewValues(model any) *bun.ValuesQuery { return r.pick().NewValues(model) }
func (r *Replica) NewSelect() *bun.SelectQuery          { return r.pick().NewSelect() }
func (r *Replica) NewInsert() *bun.InsertQuery          { return r.primary.NewInsert() }
func (r *Replica) NewUpdate() *bun.UpdateQuery          { return r.primary.NewUpdate() }
func (r *Replica) NewDelete() *bun.DeleteQuery          { return r.primary.NewDelete() }
func (r *Replica) NewMerge() *bun.MergeQuery            { return r.primary.NewMerge() }
func (r *Replica) NewRaw(query string, args ...any) *bun.RawQuery {
	return r.pick().NewRaw(query, args...)
}
func (r *Replica) NewCreateTable() *bun.CreateTableQuery     { return r.primary.NewCreateTable() }
func (r *Replica) NewDropTable() *bun.DropTableQuery         { return r.primary.NewDropTable() }
func (r *Replica) NewCreateIndex() *bun.CreateIndexQuery     { return r.primary.NewCreateIndex() }
func (r *Replica) NewDropIndex() *bun.DropIndexQuery         { return r.primary.NewDropIndex() }
func (r *Replica) NewTruncateTable() *bun.TruncateTableQuery { return r.primary.NewTruncateTable() }
func (r *Replica) NewAddColumn() *bun.AddColumnQuery         { return r.primary.NewAddColumn() }
func (r *Replica) NewDropColumn() *bun.DropColumnQuery       { return r.primary.NewDropColumn() }

// BeginTx and RunInTx open read transactions (a page and its count seen
// at one snapshot) on the picked server.
func (r *Replica) BeginTx(ctx context.Context, opts *sql.TxOptions) (bun.Tx, error) {
	return r.pick().BeginTx(ctx, opts)
}
func (r *Replica) RunInTx(ctx context.Context, opts *sql.TxOptions, f func(ctx context.Context, tx bun.Tx) error) error {
	return r.pick().RunInTx(ctx, opts, f)
}
