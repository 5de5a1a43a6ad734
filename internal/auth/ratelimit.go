package auth

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Limiter counts each key's requests in fixed windows kept in Postgres, so
// every API process shares one count. A window starts at a multiple of its
// length since the Unix epoch; a client can therefore make up to twice its
// limit across a window boundary, the usual price of fixed windows, paid
// for one cheap statement per request and exact headers.
//
// It speaks pgx directly rather than through bun: pgx prepares the statement
// once per connection and reuses the plan, where bun sends its arguments
// inlined as new text to parse and plan every time.
type Limiter struct {
	pool *pgxpool.Pool
	// def is the rate of keys without their own.
	def Rate
	// onFailure is what a request gets when its count cannot be taken.
	onFailure FailureMode
	// local counts requests in this process while Postgres cannot.
	local localCounts
}

// FailureMode is what the limiter does with a request whose count cannot
// be taken in Postgres (the database refuses connections, is at its
// limit, drops the connection, or does not answer within takeTimeout). In
// every mode the request is then counted in this process (Count), on top
// of what it knows of the shared window, so a key past its limit is
// refused 429 even while the shared count is down: a flood that fills
// the database cannot switch the limit off.
type FailureMode string

const (
	// FailClosed answers every request of a limited key 503 with
	// Retry-After while its count cannot be taken.
	FailClosed FailureMode = "closed"
	// FailLocal serves the request when this process's own count allows
	// it: the limit then holds per process rather than across them.
	FailLocal FailureMode = "local"
	// FailClosedForOwnRates is the default: FailClosed for keys given a
	// rate of their own (`keys create --rate`, `keys rate`), whose limit
	// was chosen for them, and FailLocal for keys on the service's rate.
	FailClosedForOwnRates FailureMode = "own-rates-closed"
)

// ParseFailureMode reads a FailureMode by its name.
func ParseFailureMode(s string) (FailureMode, error) {
	switch m := FailureMode(strings.ToLower(strings.TrimSpace(s))); m {
	case FailClosed, FailLocal, FailClosedForOwnRates:
		return m, nil
	}
	return "", fmt.Errorf("rate limit failure mode %q: want %s, %s or %s", s, FailClosedForOwnRates, FailClosed, FailLocal)
}

// takeTimeout bounds the wait for a count: past it the count is taken as
// failed, rather than a request waiting on a pool the database starves.
const takeTimeout = 2 * time.Second

// NewLimiter counts in pool's database, limiting keys without a rate of
// their own to def; onFailure says what a request gets while the count
// cannot be taken (the zero value is FailClosedForOwnRates).
func NewLimiter(pool *pgxpool.Pool, def Rate, onFailure FailureMode) *Limiter {
	if onFailure == "" {
		onFailure = FailClosedForOwnRates
	}
	return &Limiter{pool: pool, def: def, onFailure: onFailure, local: localCounts{windows: make(map[uuid.UUID]*localWindow)}}
}

// failsClosed reports whether a request of p is refused while its count
// cannot be taken.
func (l *Limiter) failsClosed(p Principal) bool {
	return l.onFailure == FailClosed || l.onFailure == FailClosedForOwnRates && p.Rate != nil
}

// localCounts is what this process knows of each key's current window:
// the highest count Postgres gave it, and the requests it counted while
// Postgres could not. A request counted in Postgres is held to the shared
// count plus those missed requests; one Postgres cannot count is held to
// the last shared count plus them. Either way the requests this process
// served in a window never pass its limit, however the failures and the
// successes interleave (issue 34.3: a 20/s key passed 32 in a second,
// held to the shared count and, apart, to a local count that started at
// nothing).
type localCounts struct {
	mu        sync.Mutex
	windows   map[uuid.UUID]*localWindow
	lastSweep time.Time
}

type localWindow struct {
	start, end time.Time
	// shared is the highest count Postgres answered in the window.
	shared int
	// missed counts the window's requests Postgres did not count.
	missed int
}

// current is key's window starting at start (of length window), made
// afresh when the one known is older; a newer one known (another clock
// ahead) is kept. Ended windows are swept out at most once a second.
// lc.mu is held.
func (lc *localCounts) current(key uuid.UUID, start time.Time, window time.Duration, now time.Time) *localWindow {
	if now.Sub(lc.lastSweep) >= time.Second {
		lc.lastSweep = now
		for k, w := range lc.windows {
			if !w.end.After(now) {
				delete(lc.windows, k)
			}
		}
	}
	w := lc.windows[key]
	if w == nil || w.start.Before(start) {
		w = &localWindow{start: start, end: start.Add(window)}
		lc.windows[key] = w
	}
	return w
}

// counted records the shared count u of key's window starting at start
// and returns u with this process's missed requests added.
func (lc *localCounts) counted(key uuid.UUID, start time.Time, u Usage, now time.Time) Usage {
	lc.mu.Lock()
	defer lc.mu.Unlock()
	w := lc.current(key, start, u.Rate.Window, now)
	if w.start.Equal(start) {
		w.shared = max(w.shared, u.Used)
		u.Used += w.missed
	}
	return u
}

// missed counts one request of key under rate at now that Postgres could
// not count, in the windows Postgres uses (multiples of the window since
// the Unix epoch).
func (lc *localCounts) missed(key uuid.UUID, rate Rate, now time.Time) Usage {
	secs := int64(rate.Window / time.Second)
	start := time.Unix(now.Unix()/secs*secs, 0)
	lc.mu.Lock()
	defer lc.mu.Unlock()
	w := lc.current(key, start, rate.Window, now)
	w.missed++
	return Usage{Rate: rate, Used: w.shared + w.missed, Reset: max(1, int(math.Ceil(w.end.Sub(now).Seconds())))}
}

// Usage is a key's standing in its current window.
type Usage struct {
	Rate Rate
	// Used counts this window's requests, this one included.
	Used int
	// Reset is how long until the window ends, in whole seconds (at least 1).
	Reset int
}

// Allowed reports whether the request that took this usage may proceed.
func (u Usage) Allowed() bool { return u.Used <= u.Rate.Limit }

// Remaining is what the window still allows.
func (u Usage) Remaining() int { return max(0, u.Rate.Limit-u.Used) }

// takeSQL counts one request in the key's current window and reads the
// count and the seconds left, in one statement. Time is the database's, so
// processes with skewed clocks agree on the windows.
const takeSQL = `
INSERT INTO rate_limit_windows AS w (key_id, window_start, ends_at, hits)
SELECT $1, win.start, win.start + make_interval(secs => $2::integer), 1
FROM (SELECT to_timestamp(floor(extract(epoch FROM now()) / $2::integer) * $2::integer) AS start) AS win
ON CONFLICT (key_id, window_start) DO UPDATE SET hits = w.hits + 1
RETURNING w.hits, ceil(extract(epoch FROM w.ends_at - now()))::int, w.window_start`

// Take counts a request of key under rate in Postgres alone.
func (l *Limiter) Take(ctx context.Context, key uuid.UUID, rate Rate) (Usage, error) {
	u, _, err := l.take(ctx, key, rate)
	return u, err
}

// take is Take, with the window's start.
func (l *Limiter) take(ctx context.Context, key uuid.UUID, rate Rate) (Usage, time.Time, error) {
	ctx, cancel := context.WithTimeout(ctx, takeTimeout)
	defer cancel()
	secs := int(rate.Window / time.Second)
	u := Usage{Rate: rate}
	var start time.Time
	if err := l.pool.QueryRow(ctx, takeSQL, key, secs).Scan(&u.Used, &u.Reset, &start); err != nil {
		return Usage{}, time.Time{}, fmt.Errorf("count request of %s: %w", key, err)
	}
	u.Reset = max(1, u.Reset)
	return u, start, nil
}

// Count counts a request of key (an API key, a subscription address)
// under rate: in Postgres, where every process shares the count, and
// with what this process counted while Postgres could not (localCounts).
// When Postgres cannot count, the usage is this process's count and err
// says why; the request is refused past the limit either way.
func (l *Limiter) Count(ctx context.Context, key uuid.UUID, rate Rate) (Usage, error) {
	u, start, err := l.take(ctx, key, rate)
	if err != nil {
		return l.local.missed(key, rate, time.Now()), err
	}
	return l.local.counted(key, start, u, time.Now()), nil
}

// Forget removes the counters of windows that have ended.
func (l *Limiter) Forget(ctx context.Context) (int64, error) {
	tag, err := l.pool.Exec(ctx, "DELETE FROM rate_limit_windows WHERE ends_at <= now()")
	if err != nil {
		return 0, fmt.Errorf("forget ended rate limit windows: %w", err)
	}
	return tag.RowsAffected(), nil
}

// RateFor is the rate p is held to.
func (l *Limiter) RateFor(p Principal) Rate {
	if p.Rate != nil {
		return *p.Rate
	}
	return l.def
}

// Admission is the limiter's answer for one request of a key.
type Admission struct {
	// Rate is the key's rate; an unlimited one was not counted.
	Rate  Rate
	Usage Usage
	// Unavailable: the count could not be taken in Postgres and the key
	// fails closed (FailureMode); the request is to be refused 503.
	Unavailable bool
}

// Admit counts a request of p's key (Count). When the count cannot be
// taken in Postgres, the limiter's FailureMode decides whether the key
// fails closed; the failure is logged.
func (l *Limiter) Admit(ctx context.Context, p Principal) Admission {
	rate := l.RateFor(p)
	if rate.IsUnlimited() {
		return Admission{Rate: rate}
	}
	u, err := l.Count(ctx, p.KeyID, rate)
	if err != nil {
		closed := l.failsClosed(p) && u.Allowed()
		slog.WarnContext(ctx, "rate limit not counted in the database; counted in this process", "key_id", p.KeyID, "refused", closed || !u.Allowed(), "err", err)
		return Admission{Rate: rate, Usage: u, Unavailable: closed}
	}
	return Admission{Rate: rate, Usage: u}
}
