package keyauth

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/feedsvc/feedsvc/http/envelope"
	"github.com/feedsvc/feedsvc/internal/auth"
	"github.com/feedsvc/feedsvc/testkit/testdb"
)

// refusingPool is a pool whose every connection is refused: a port that
// was just listened on and closed, so nothing answers there.
func refusingPool(t *testing.T) *pgxpool.Pool {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	pool, err := pgxpool.New(context.Background(), "postgres://postgres@"+addr+"/feedsvc?sslmode=disable&connect_timeout=1")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pool
}

// When Postgres refuses to count (issue 26.3: a 100/min key passed 298
// requests while the server was at max_connections), a key with a rate of
// its own is refused 503 by default, and every key is still held to its
// limit by this process's own count: a flood cannot switch the limit off.
func TestARefusedCountNeverLetsAFloodPast(t *testing.T) {
	rate := auth.Rate{Limit: 5, Window: time.Minute}
	cases := []struct {
		name     string
		mode     auth.FailureMode
		ownRate  bool
		wantPass int
		wantCode int
	}{
		{"a key with its own rate fails closed by default", auth.FailClosedForOwnRates, true, 0, fiber.StatusServiceUnavailable},
		{"a key on the service's rate is counted locally by default", auth.FailClosedForOwnRates, false, 5, fiber.StatusTooManyRequests},
		{"every key fails closed in the closed mode", auth.FailClosed, false, 0, fiber.StatusServiceUnavailable},
		{"a key with its own rate is counted locally in the local mode", auth.FailLocal, true, 5, fiber.StatusTooManyRequests},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			l := auth.NewLimiter(refusingPool(t), rate, tc.mode)
			p := auth.Principal{KeyID: uuid.New()}
			if tc.ownRate {
				p.Rate = &rate
			}
			app := limitedApp(l, p)
			passed := 0
			for i := 0; i < 20; i++ {
				resp := get(t, app)
				switch resp.StatusCode {
				case fiber.StatusNoContent:
					passed++
				case tc.wantCode, fiber.StatusTooManyRequests:
					if resp.Header.Get("Retry-After") == "" {
						t.Fatalf("a %d without Retry-After", resp.StatusCode)
					}
				default:
					t.Fatalf("request %d answered %d", i, resp.StatusCode)
				}
			}
			if passed != tc.wantPass {
				t.Fatalf("%d of 20 requests passed; want %d", passed, tc.wantPass)
			}
		})
	}
}

// get sends GET / to app.
func get(t *testing.T, app *fiber.App) *http.Response {
	t.Helper()
	resp, err := app.Test(httptest.NewRequest("GET", "/", nil), -1)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// limitedApp serves GET / behind RateLimit(l) for p's requests.
func limitedApp(l *auth.Limiter, p auth.Principal) *fiber.App {
	app := fiber.New(fiber.Config{ErrorHandler: envelope.ErrorHandler(slog.New(slog.DiscardHandler))})
	app.Use(func(c *fiber.Ctx) error { c.Locals(principalKey{}, p); return c.Next() })
	app.Use(RateLimit(l))
	app.Get("/", func(c *fiber.Ctx) error { return c.SendStatus(fiber.StatusNoContent) })
	return app
}

// Issue 34.3: while connections to the database were being cut, the
// service's rate (20/s) let 32 requests through in one second: the
// requests Postgres counted were held to the shared count, those it could
// not to a count of this process that started at nothing, so each let
// the whole rate pass. Whichever way the failures and the counts
// interleave, a key never gets more than its rate.
func TestACountThatFailsAndComesBackNeverLetsMoreThanTheRatePast(t *testing.T) {
	_, dsn := testdb.New(t)
	rate := auth.Rate{Limit: 5, Window: 24 * time.Hour}
	type phase struct {
		down     bool // the database cannot count
		requests int
	}
	cases := []struct {
		name   string
		mode   auth.FailureMode
		phases []phase
	}{
		{"down first, then back", auth.FailClosedForOwnRates, []phase{{true, 4}, {false, 6}}},
		{"up first, then down", auth.FailClosedForOwnRates, []phase{{false, 3}, {true, 6}}},
		{"up, down, up, down", auth.FailLocal, []phase{{false, 2}, {true, 2}, {false, 1}, {true, 4}, {false, 3}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			proxy := testdb.NewProxy(t, dsn)
			pool, err := pgxpool.New(context.Background(), proxy.URL(dsn))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(pool.Close)
			// A key on the service's rate: counted in this process when
			// Postgres cannot count.
			app := limitedApp(auth.NewLimiter(pool, rate, tc.mode), auth.Principal{KeyID: uuid.New()})
			passed, sent := 0, 0
			for _, ph := range tc.phases {
				proxy.Refuse(ph.down)
				if ph.down {
					proxy.Cut()
				}
				for range ph.requests {
					sent++
					switch st := get(t, app).StatusCode; st {
					case fiber.StatusNoContent:
						passed++
					case fiber.StatusTooManyRequests:
					default:
						t.Fatalf("request %d answered %d", sent, st)
					}
				}
			}
			if passed != rate.Limit {
				t.Fatalf("%d of %d requests passed; the rate allows %d", passed, sent, rate.Limit)
			}
		})
	}
}
