// Package lease lets one process at a time work on a row of a table (a
// source to crawl, a backfill to run, a webhook delivery to send): a lease
// is the row's lease_owner and leased_until, taken in one statement so
// that of two processes racing for it exactly one wins, renewed while the
// work runs, and handed back with the outcome. A process that dies only
// holds its rows until their leases expire.
package lease

import (
	"context"
	crand "crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/uptrace/bun"
)

// Table is a table whose rows are leased: Key is its primary key, and it
// has the columns leased_until (timestamptz) and lease_owner (text). The
// names are the code's own, never input.
type Table struct {
	Name string
	Key  string
	// Claimable is what else a row must satisfy to be claimed, as SQL
	// over the row aliased t (e.g. "t.next_at <= now()"); empty means
	// nothing else.
	Claimable string
}

// Leases takes and keeps leases on one table for one owner.
type Leases struct {
	db       bun.IDB
	table    Table
	owner    string
	duration time.Duration
	log      *slog.Logger
}

// New returns the leases of owner on table, each lasting duration unless
// renewed.
func New(db bun.IDB, table Table, owner string, duration time.Duration, logger *slog.Logger) *Leases {
	if logger == nil {
		logger = slog.Default()
	}
	return &Leases{db: db, table: table, owner: owner, duration: duration, log: logger}
}

// DefaultOwner names this process uniquely: two processes on one host
// differ by pid, and the random part covers pid reuse across container
// restarts.
func DefaultOwner() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "unknown"
	}
	b := make([]byte, 4)
	_, _ = crand.Read(b) // crypto/rand.Read never fails on supported platforms
	return fmt.Sprintf("%s-%d-%s", host, os.Getpid(), hex.EncodeToString(b))
}

// Claim takes the lease of the row keyed key, inserting the row when there
// is none, in one statement: the conditional update succeeds only when the
// row is claimable and nobody holds a live lease, so of two processes
// racing for a row exactly one gets it back (the loser's upsert waits for
// the winner's row, then fails its WHERE). returning names columns of the
// claimed row (as t.column) to scan into dest; empty returns the key.
// false means someone else holds the row, or it is not claimable.
func (l *Leases) Claim(ctx context.Context, key any, returning string, dest ...any) (bool, error) {
	if returning == "" {
		var k string
		returning, dest = "t."+l.table.Key, []any{&k}
	}
	cond := "(t.leased_until IS NULL OR t.leased_until < now())"
	if l.table.Claimable != "" {
		cond = l.table.Claimable + " AND " + cond
	}
	err := l.db.NewRaw(`INSERT INTO ? AS t (?, leased_until, lease_owner) VALUES (?, now() + ? * interval '1 millisecond', ?)
		ON CONFLICT (?) DO UPDATE SET leased_until = EXCLUDED.leased_until, lease_owner = EXCLUDED.lease_owner
		WHERE `+cond+` RETURNING `+returning,
		bun.Ident(l.table.Name), bun.Ident(l.table.Key), key, l.duration.Milliseconds(), l.owner, bun.Ident(l.table.Key)).
		Scan(ctx, dest...)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("lease %s %v: %w", l.table.Name, key, err)
	}
	return true, nil
}

// Renew extends a lease this owner holds; false means it was lost.
func (l *Leases) Renew(ctx context.Context, key any) (bool, error) {
	return l.update(ctx, key, "leased_until = now() + ? * interval '1 millisecond'", l.duration.Milliseconds())
}

// Update changes the row while this owner holds its lease; set is an SQL
// SET list whose placeholders args fill. false means the lease was lost and
// nothing changed, so a process whose lease expired cannot overwrite the
// work of the one that took over.
func (l *Leases) Update(ctx context.Context, key any, set string, args ...any) (bool, error) {
	return l.update(ctx, key, set, args...)
}

// Release hands the lease back, changing the row by set (may be empty) in
// the same statement, while this owner still holds it.
func (l *Leases) Release(ctx context.Context, key any, set string, args ...any) error {
	released := "leased_until = NULL, lease_owner = NULL"
	if set != "" {
		released += ", " + set
	}
	if _, err := l.update(ctx, key, released, args...); err != nil {
		return fmt.Errorf("release: %w", err)
	}
	return nil
}

func (l *Leases) update(ctx context.Context, key any, set string, args ...any) (bool, error) {
	args = append([]any{bun.Ident(l.table.Name)}, args...)
	args = append(args, bun.Ident(l.table.Key), key, l.owner)
	res, err := l.db.NewRaw(`UPDATE ? SET `+set+` WHERE ? = ? AND lease_owner = ?`, args...).Exec(ctx)
	if err != nil {
		return false, fmt.Errorf("update leased %s %v: %w", l.table.Name, key, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("update leased %s %v: %w", l.table.Name, key, err)
	}
	return n > 0, nil
}

// Keep renews the lease of key every third of its duration while work
// runs, until the returned stop is called or ctx ends. When the lease is
// lost (another process took it after it expired, e.g. during a long
// database outage), lost is called so the work stops and two processes do
// not keep working on one row. A failed renewal is only logged: the lease
// is still ours until it expires.
//
// It keeps a timer, not a goroutine: most work under a lease (a poll that
// answers 304) ends long before the first renewal, and a goroutine parked
// per lease would cost a start and two wake-ups each for nothing. When
// stop returns no renewal runs or will run.
func (l *Leases) Keep(ctx context.Context, key any, lost func()) (stop func()) {
	k := &keeper{}
	var renew func()
	renew = func() {
		k.mu.Lock()
		defer k.mu.Unlock()
		if k.stopped || ctx.Err() != nil {
			return
		}
		held, err := l.Renew(ctx, key)
		switch {
		case err != nil && ctx.Err() != nil:
			return
		case err != nil:
			l.log.Warn("lease renewal failed", "table", l.table.Name, "key", key, "err", err)
		case !held:
			l.log.Warn("lease lost; stopping", "table", l.table.Name, "key", key)
			lost()
			return
		}
		k.timer.Reset(l.duration / 3)
	}
	k.mu.Lock()
	k.timer = time.AfterFunc(l.duration/3, renew)
	k.mu.Unlock()
	return func() {
		// A renewal under way holds mu: stop waits for it to end.
		k.mu.Lock()
		defer k.mu.Unlock()
		k.stopped = true
		k.timer.Stop()
	}
}

// keeper is one Keep's state.
type keeper struct {
	mu      sync.Mutex
	timer   *time.Timer
	stopped bool
}

// ReleaseContext is for handing back a lease after ctx ended (on
// shutdown), bounded so that a dead database cannot hang it.
func ReleaseContext() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), 5*time.Second)
}
