package http_test

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/feedsvc/feedsvc/internal/auth"
	"github.com/feedsvc/feedsvc/testkit/servicetest"
)

// BenchmarkRateLimitOverhead measures what the per-key rate limit adds to
// an authenticated request: GET /feeds/news (one feed) through the whole
// Fiber stack in memory, by a key never limited (no count taken) and by one
// limited so high it is never refused (one upsert per request). The two
// alternate in one loop, so a machine whose load drifts (other work on the
// same cores) slows both alike; each is reported as its own ns/req metric,
// with their difference.
func BenchmarkRateLimitOverhead(b *testing.B) {
	h := servicetest.Start(b)
	ctx := context.Background()
	key := func(rate auth.Rate) string {
		k, _, err := h.Service.Keys.CreateKey(ctx, "bench", auth.AllScopes(), nil, auth.WithRate(rate))
		if err != nil {
			b.Fatal(err)
		}
		return k
	}
	unlimited, limited := key(auth.Unlimited), key(auth.Rate{Limit: 1_000_000_000, Window: time.Hour})
	as(h, unlimited).doBench(b, "POST", "/feeds/news", `{"name":"one","description":"feed"}`)
	get := func(key string) time.Duration {
		req := httptest.NewRequest("GET", "/feeds/news", nil)
		req.Header.Set("Authorization", "Bearer "+key)
		start := time.Now()
		resp, err := h.Service.App.Test(req, -1)
		took := time.Since(start)
		if err != nil || resp.StatusCode != 200 {
			b.Fatalf("GET /feeds/news: %v %v", resp, err)
		}
		resp.Body.Close()
		return took
	}
	var without, with time.Duration
	n := 0
	for b.Loop() {
		without += get(unlimited)
		with += get(limited)
		n++
	}
	b.ReportMetric(float64(without.Nanoseconds())/float64(n), "unlimited-ns/req")
	b.ReportMetric(float64(with.Nanoseconds())/float64(n), "limited-ns/req")
	b.ReportMetric(float64((with-without).Nanoseconds())/float64(n), "overhead-ns/req")
}

// doBench sends one request as the caller from a benchmark.
func (c caller) doBench(b *testing.B, method, path string, body any) {
	b.Helper()
	if r := c.h.DoWith(method, path, body, map[string]string{"Authorization": "Bearer " + c.key}); r.Status >= 400 {
		b.Fatalf("%s %s: %d %s", method, path, r.Status, r.Raw)
	}
}
