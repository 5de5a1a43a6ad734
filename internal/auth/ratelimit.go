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
// limit, or does not answer within takeTimeout). In every mode the
// request is then counted in this process, in the same windows, so a key
// past its limit is refused 429 even while the shared count is down: a
// flood that fills the database cannot switch the limit off.
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
	return &Limiter{pool: pool, def: def, onFailure: onFailure, local: localCounts{windows: make(map[uuid.UUID]localWindow)}}
}

// failsClosed reports whether a request of p is refused while its count
// cannot be taken.
func (l *Limiter) failsClosed(p Principal) bool {
	return l.onFailure == FailClosed || l.onFailure == FailClosedForOwnRates && p.Rate != nil
}

// localCounts is the in-process count of each key in its current window,
// kept while Postgres cannot count.
type localCounts struct {
	mu      sync.Mutex
	windows map[uuid.UUID]localWindow
}

type localWindow struct {
	start time.Time
	hits  int
}

// take counts one request of key under rate at now, in the windows
// Postgres uses (multiples of the window since the Unix epoch).
func (lc *localCounts) take(key uuid.UUID, rate Rate, now time.Time) Usage {
	secs := int64(rate.Window / time.Second)
	start := time.Unix(now.Unix()/secs*secs, 0)
	lc.mu.Lock()
	defer lc.mu.Unlock()
	w := lc.windows[key]
	if !w.start.Equal(start) {
		w = localWindow{start: start}
		// Ended windows go as new ones start: the map holds at most one
		// window per key seen while counting failed.
		for k, other := range lc.windows {
			if !other.start.Add(maxRateWindow).After(now) {
				delete(lc.windows, k)
			}
		}
	}
	w.hits++
	lc.windows[key] = w
	return Usage{Rate: rate, Used: w.hits, Reset: max(1, int(math.Ceil(start.Add(rate.Window).Sub(now).Seconds())))}
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
RETURNING w.hits, ceil(extract(epoch FROM w.ends_at - now()))::int`

// Take counts a request of key under rate.
func (l *Limiter) Take(ctx context.Context, key uuid.UUID, rate Rate) (Usage, error) {
	ctx, cancel := context.WithTimeout(ctx, takeTimeout)
	defer cancel()
	secs := int(rate.Window / time.Second)
	u := Usage{Rate: rate}
	if err := l.pool.QueryRow(ctx, takeSQL, key, secs).Scan(&u.Used, &u.Reset); err != nil {
		return Usage{}, fmt.Errorf("count request of api key %s: %w", key, err)
	}
	u.Reset = max(1, u.Reset)
	return u, nil
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

// Admit counts a request of p's key. When the count cannot be taken in
// Postgres, the request is counted in this process and the limiter's
// FailureMode decides whether the key fails closed; the failure is logged.
func (l *Limiter) Admit(ctx context.Context, p Principal) Admission {
	rate := l.RateFor(p)
	if rate.IsUnlimited() {
		return Admission{Rate: rate}
	}
	u, err := l.Take(ctx, p.KeyID, rate)
	if err != nil {
		u = l.local.take(p.KeyID, rate, time.Now())
		closed := l.failsClosed(p) && u.Allowed()
		slog.WarnContext(ctx, "rate limit not counted in the database; counted in this process", "key_id", p.KeyID, "refused", closed || !u.Allowed(), "err", err)
		return Admission{Rate: rate, Usage: u, Unavailable: closed}
	}
	return Admission{Rate: rate, Usage: u}
}
