package http_test

import (
	"net/http"
	"testing"

	"github.com/feedsvc/feedsvc/service/config"
	"github.com/feedsvc/feedsvc/testkit/servicetest"
	"github.com/feedsvc/feedsvc/testkit/testdb"
)

// Issue 34.4: 2 of 691 database failures answered 500, "broken pipe": a
// connection cut under the request fails with a network error pgx passes
// on as it is (a write that fails, a read that ends), which the error
// mapper did not know for the database's. Every request that meets a cut
// connection, a read or a write, in either dialect, answers 503 with
// Retry-After, the client's cue to repeat it.
func TestADatabaseConnectionCutUnderARequestAnswers503WithRetryAfter(t *testing.T) {
	proxy := testdb.NewProxy(t, testdb.ServerURL())
	h := servicetest.Start(t, func(c *config.Config) { c.DatabaseURL = proxy.URL(c.DatabaseURL) })
	news := h.Do("POST", "/feeds/news", map[string]string{"name": "n", "description": "d"}).MustStatus(t, 201).Data()["id"].(string)
	events := h.Do("POST", "/feeds/events", map[string]string{"name": "e", "description": "d"}).MustStatus(t, 201).Data()["id"].(string)
	routes := []struct {
		method, path string
		body         any
	}{
		{"GET", "/feeds/news/" + news + "/items", nil},
		{"GET", "/feeds/events/" + events + "/items", nil},
		{"GET", "/sources", nil},
		{"POST", "/feeds/news", map[string]string{"name": "written", "description": "d"}},
		{"POST", "/feeds/events", map[string]string{"name": "written", "description": "d"}},
	}
	cuts := []struct {
		name string
		// cut cuts the connections; the returned function ends the cut.
		cut func() func()
	}{
		// The request writes to a connection the server has reset: "broken
		// pipe", "connection reset by peer".
		{"cut before the request", func() func() { proxy.Cut(); return func() {} }},
		// The request's statement goes out and the connection is reset
		// before any answer: "unexpected EOF", "connection reset by peer".
		{"cut under the request", func() func() { proxy.CutOnNextWrite(); return proxy.Disarm }},
	}
	for _, cut := range cuts {
		for _, r := range routes {
			t.Run(cut.name+" "+r.method+" "+r.path, func(t *testing.T) {
				failed := 0
				for round := 0; round < 5; round++ {
					// A request first, so that the pool holds connections
					// that were just used (none is checked before its use).
					h.DoWith("GET", "/feeds/news/"+news, nil, map[string]string{"Authorization": "Bearer " + h.Key})
					end := cut.cut()
					got := h.DoWith(r.method, r.path, r.body, map[string]string{"Authorization": "Bearer " + h.Key})
					end()
					if got.Status < 300 {
						continue
					}
					failed++
					e, _ := got.Body["error"].(map[string]any)
					if got.Status != http.StatusServiceUnavailable || got.Header.Get("Retry-After") == "" ||
						got.Body["success"] != false || e["code"] != "SERVICE_UNAVAILABLE" {
						t.Fatalf("round %d: answered %d, Retry-After %q: %s", round, got.Status, got.Header.Get("Retry-After"), got.Raw)
					}
				}
				if failed == 0 {
					t.Fatal("no request met a cut connection: the test cut nothing the request used")
				}
				t.Logf("%d of 5 requests met a cut connection", failed)
			})
		}
	}
	// Once nothing is cut, the service serves again.
	h.Do("GET", "/feeds/news/"+news+"/items", nil).MustStatus(t, 200)
}
