package http_test

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/feedsvc/feedsvc/internal/auth"
	"github.com/feedsvc/feedsvc/service/config"
	"github.com/feedsvc/feedsvc/testkit/servicetest"
)

// Per-key rate limits: counted in Postgres, so every API process shares
// them, and told to the client in the IETF RateLimit headers.

// limitedKey issues a key of org with its own rate.
func limitedKey(t *testing.T, h *servicetest.Harness, org string, rate auth.Rate) string {
	t.Helper()
	key, _, err := h.Service.Keys.CreateKey(context.Background(), org, auth.AllScopes(), nil, auth.WithRate(rate))
	if err != nil {
		t.Fatal(err)
	}
	return key
}

// headerInt reads a numeric header, failing the test if it is missing.
func headerInt(t *testing.T, r servicetest.Response, name string) int {
	t.Helper()
	n, err := strconv.Atoi(r.Header.Get(name))
	if err != nil {
		t.Fatalf("answer %d: header %s = %q is not a number; headers %v", r.Status, name, r.Header.Get(name), r.Header)
	}
	return n
}

// awayFromWindowEnd waits for the next window when fewer than 20 s are left
// in the current one, so the requests of a test are counted in one window.
func awayFromWindowEnd(t *testing.T, r servicetest.Response) bool {
	t.Helper()
	if reset := headerInt(t, r, "RateLimit-Reset"); reset < 20 {
		time.Sleep(time.Duration(reset+1) * time.Second)
		return true
	}
	return false
}

func TestARateLimitIsSharedByEveryAPIProcessAndAnswered429PastIt(t *testing.T) {
	h := servicetest.Start(t)
	second := h.Another()
	servers := []*servicetest.Harness{h, second}
	day := auth.Rate{Limit: 5, Window: 24 * time.Hour}
	key := limitedKey(t, h, "acme", day)
	if awayFromWindowEnd(t, as(h, limitedKey(t, h, "probe", day)).do(t, "GET", "/feeds/news", nil)) {
		t.Log("waited for a fresh window")
	}
	for i := 1; i <= 5; i++ {
		server := servers[i%2]
		r := as(server, key).do(t, "GET", "/feeds/news", nil).MustStatus(t, http.StatusOK)
		if headerInt(t, r, "RateLimit-Limit") != 5 || headerInt(t, r, "RateLimit-Remaining") != 5-i {
			t.Fatalf("request %d on server %d: limit %s remaining %s; want 5 and %d", i, i%2,
				r.Header.Get("RateLimit-Limit"), r.Header.Get("RateLimit-Remaining"), 5-i)
		}
		if reset := headerInt(t, r, "RateLimit-Reset"); reset < 1 || reset > 86400 {
			t.Fatalf("RateLimit-Reset %d is not within the day", reset)
		}
		if p := r.Header.Get("RateLimit-Policy"); p != "5;w=86400" {
			t.Fatalf("RateLimit-Policy %q", p)
		}
	}
	for i, server := range servers {
		t.Run("past the limit server "+strconv.Itoa(i)+" answers 429 with Retry-After", func(t *testing.T) {
			r := as(server, key).do(t, "POST", "/feeds/news", `{"name":"refused","description":"x"}`)
			e := wantError(t, r, http.StatusTooManyRequests, "TOO_MANY_REQUESTS")
			wantKeys(t, "error", e, "code", "message")
			if !strings.Contains(e["message"].(string), "5 requests every 86400 seconds") {
				t.Fatalf("429 message %q does not give the rate", e["message"])
			}
			retry := headerInt(t, r, "Retry-After")
			if retry != headerInt(t, r, "RateLimit-Reset") || retry < 1 || headerInt(t, r, "RateLimit-Remaining") != 0 {
				t.Fatalf("Retry-After %d, headers %v", retry, r.Header)
			}
		})
	}
	t.Run("the refused create changed nothing", func(t *testing.T) {
		if feeds := wantDataList(t, as(h, h.Key).do(t, "GET", "/feeds/news", nil)); len(feeds) != 0 {
			t.Fatalf("feeds %v", feeds)
		}
	})
	t.Run("an event route answers 429 in the same body", func(t *testing.T) {
		wantError(t, as(second, key).do(t, "GET", "/feeds/events", nil), http.StatusTooManyRequests, "TOO_MANY_REQUESTS")
	})
	t.Run("another key of the same organization has its own count", func(t *testing.T) {
		r := as(h, limitedKey(t, h, "acme", day)).do(t, "GET", "/feeds/news", nil).MustStatus(t, http.StatusOK)
		if headerInt(t, r, "RateLimit-Remaining") != 4 {
			t.Fatalf("remaining %s", r.Header.Get("RateLimit-Remaining"))
		}
	})
	t.Run("an unlimited key has no RateLimit headers", func(t *testing.T) {
		r := as(h, limitedKey(t, h, "acme", auth.Unlimited)).do(t, "GET", "/feeds/news", nil).MustStatus(t, http.StatusOK)
		if r.Header.Get("RateLimit-Limit") != "" {
			t.Fatalf("headers %v", r.Header)
		}
	})
}

func TestKeysWithoutARateOfTheirOwnHaveTheServiceDefault(t *testing.T) {
	h := servicetest.Start(t, func(c *config.Config) { c.RateLimit = auth.Rate{Limit: 3, Window: 24 * time.Hour} })
	c := as(h, h.Key)
	first := c.do(t, "GET", "/feeds/news", nil).MustStatus(t, http.StatusOK)
	if awayFromWindowEnd(t, first) {
		first = c.do(t, "GET", "/feeds/news", nil)
	}
	used := 3 - headerInt(t, first, "RateLimit-Remaining")
	if headerInt(t, first, "RateLimit-Limit") != 3 {
		t.Fatalf("limit %s; want the default 3", first.Header.Get("RateLimit-Limit"))
	}
	t.Run("errors after authentication carry the headers too", func(t *testing.T) {
		r := c.do(t, "GET", "/feeds/news/"+randomID(), nil)
		wantError(t, r, http.StatusNotFound, "NOT_FOUND")
		if headerInt(t, r, "RateLimit-Remaining") != 3-used-1 {
			t.Fatalf("remaining %s", r.Header.Get("RateLimit-Remaining"))
		}
	})
	t.Run("an unauthenticated answer is not counted and has no headers", func(t *testing.T) {
		r := send(t, h, "GET", "/feeds/news", nil, nil)
		wantUnauthorized(t, r)
		if r.Header.Get("RateLimit-Limit") != "" {
			t.Fatalf("401 with rate headers %v", r.Header)
		}
	})
	for used++; used < 3; used++ {
		c.do(t, "GET", "/feeds/news", nil).MustStatus(t, http.StatusOK)
	}
	wantError(t, c.do(t, "GET", "/feeds/news", nil), http.StatusTooManyRequests, "TOO_MANY_REQUESTS")
}
