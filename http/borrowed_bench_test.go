package http_test

import (
	"context"
	"io"
	"net/http"
	"strconv"
	"testing"
	"time"

	apihttp "github.com/feedsvc/feedsvc/http"
	"github.com/feedsvc/feedsvc/internal/auth"
	"github.com/feedsvc/feedsvc/testkit/servicetest"
)

// BenchmarkRequestStrings measures what Fiber's Immutable setting (every
// string and byte slice a handler gets is a copy; server.go) costs beside
// borrowed strings copied where they are kept, on a served socket with a
// kept-alive client:
//
//   - items: GET /feeds/news/{id}/items?limit=20&include=source with a
//     rate-limited key and an X-Request-Id: authentication (cached), the
//     rate count in Postgres, the list's query and its rendering;
//   - refused: the same request without a key, answered 401 before any
//     database is asked: nearly all of it is the framework's and the
//     middleware's own work, where a copy per string weighs most.
//
// Each strings=… sub-benchmark has its own service and database, started
// before either runs; with -count, the two alternate, so that a drift in
// the machine's load reaches both. Compare them with benchstat -col
// /strings.
func BenchmarkRequestStrings(b *testing.B) {
	type served struct {
		base, key, feed string
		client          *http.Client
	}
	start := func(immutable bool) served {
		was := apihttp.SetImmutable(immutable)
		h := servicetest.Start(b)
		apihttp.SetImmutable(was)
		key, _, err := h.Service.Keys.CreateKey(context.Background(), "acme", auth.AllScopes(), nil,
			auth.WithRate(auth.Rate{Limit: 1_000_000_000, Window: time.Hour}))
		if err != nil {
			b.Fatal(err)
		}
		feed := h.Do("POST", "/feeds/news", map[string]string{"name": "bench", "description": "d"}).MustStatus(b, 201).Data()
		att := h.Do("POST", "/feeds/news/"+feed["id"].(string)+"/sources", map[string]string{"sourceType": "site", "domain": "news.example"}).MustStatus(b, 201).Data()
		f := &itemFixture{h: h, feedID: feed["id"].(string)}
		for i := range 20 {
			f.add(b, att, full(i))
		}
		return served{base: "http://" + h.Listen(), key: key, feed: f.feedID,
			client: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}}}
	}
	ways := []struct {
		name string
		s    served
	}{{"borrowed", start(false)}, {"immutable", start(true)}}
	get := func(b *testing.B, s served, target string, headers map[string]string, want int) {
		req, _ := http.NewRequest("GET", s.base+target, nil)
		for k, v := range headers {
			req.Header.Set(k, v)
		}
		resp, err := s.client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != want {
			b.Fatalf("GET %s: %d, want %d", target, resp.StatusCode, want)
		}
	}
	for _, path := range []string{"items", "refused"} {
		for _, way := range ways {
			b.Run("path="+path+"/strings="+way.name, func(b *testing.B) {
				s := way.s
				i := 0
				for b.Loop() {
					i++
					switch path {
					case "items":
						get(b, s, "/feeds/news/"+s.feed+"/items?limit=20&include=source", map[string]string{
							"Authorization": "Bearer " + s.key, "X-Request-Id": "bench-" + strconv.Itoa(i)}, http.StatusOK)
					case "refused":
						get(b, s, "/feeds/news/"+s.feed+"/items?limit=20&include=source", map[string]string{
							"X-Request-Id": "bench-" + strconv.Itoa(i)}, http.StatusUnauthorized)
					}
				}
			})
		}
	}
}
