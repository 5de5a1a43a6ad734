package auth

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/feedsvc/feedsvc/http/envelope"
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
}

// NewLimiter counts in pool's database, limiting keys without a rate of
// their own to def.
func NewLimiter(pool *pgxpool.Pool, def Rate) *Limiter {
	return &Limiter{pool: pool, def: def}
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

// RateLimit counts every authenticated request against its key's rate and
// answers with the RateLimit-Limit, -Remaining and -Reset headers of the
// IETF draft (and RateLimit-Policy); past the limit it answers 429
// TOO_MANY_REQUESTS with Retry-After. It must run after Middleware. When
// the count cannot be taken the request is served, and the failure logged:
// a database that cannot count will fail the request's own work anyway.
func RateLimit(l *Limiter) fiber.Handler {
	return func(c *fiber.Ctx) error {
		p, ok := PrincipalFrom(c)
		if !ok {
			return c.Next()
		}
		rate := l.RateFor(p)
		if rate.IsUnlimited() {
			return c.Next()
		}
		u, err := l.Take(c.UserContext(), p.KeyID, rate)
		if err != nil {
			slog.WarnContext(c.UserContext(), "rate limit not checked", "key_id", p.KeyID, "err", err)
			return c.Next()
		}
		reset := strconv.Itoa(u.Reset)
		c.Set("RateLimit-Limit", strconv.Itoa(rate.Limit))
		c.Set("RateLimit-Remaining", strconv.Itoa(u.Remaining()))
		c.Set("RateLimit-Reset", reset)
		c.Set("RateLimit-Policy", fmt.Sprintf("%d;w=%d", rate.Limit, int(rate.Window/time.Second)))
		if u.Allowed() {
			return c.Next()
		}
		c.Set(fiber.HeaderRetryAfter, reset)
		return &envelope.Error{Status: fiber.StatusTooManyRequests, Code: envelope.CodeTooMany,
			Message: fmt.Sprintf("rate limit exceeded: this API key may make %d requests every %d seconds; retry in %s seconds",
				rate.Limit, int(rate.Window/time.Second), reset)}
	}
}
