package web

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/ingest/connector"
	"github.com/feedsvc/feedsvc/ingest/crawl"
)

// testSite serves robots.txt naming a sitemap of two articles, a home
// page, and the sitemap, which fails while broken is set.
type testSite struct {
	*httptest.Server
	mu     sync.Mutex
	hits   map[string]int
	broken atomic.Bool
}

func newTestSite(t *testing.T) *testSite {
	t.Helper()
	s := &testSite{hits: map[string]int{}}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.hits[r.URL.Path]++
		s.mu.Unlock()
		switch r.URL.Path {
		case "/robots.txt":
			_, _ = w.Write([]byte("User-agent: *\nAllow: /\nSitemap: " + s.URL + "/sitemap.xml\n"))
		case "/":
			w.Header().Set("Content-Type", "text/html")
			_, _ = w.Write([]byte("<html><head><title>Home</title></head></html>"))
		case "/sitemap.xml":
			if s.broken.Load() {
				w.WriteHeader(http.StatusInternalServerError)
				return
			}
			_, _ = w.Write([]byte(`<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">` +
				`<url><loc>` + s.URL + `/news/first-story-here</loc></url>` +
				`<url><loc>` + s.URL + `/news/second-story-here</loc></url></urlset>`))
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *testSite) hitCount(path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hits[path]
}

func (s *testSite) source(state json.RawMessage) connector.Source {
	return connector.Source{ID: uuid.New(), State: state,
		Details: domain.SourceDetails{SourceType: domain.SourceSite, Domain: strings.TrimPrefix(s.URL, "http://")}}
}

func newConnector() *Connector {
	return New(crawl.New(crawl.Options{AllowPrivateNetworks: true}), Options{DiscoveryTTL: time.Hour}, slog.New(slog.DiscardHandler))
}

func TestASiteIsDiscoveredOnceAndItsDiscoveryKeptUntilItIsStale(t *testing.T) {
	site := newTestSite(t)
	c := newConnector()
	ctx := context.Background()

	first, err := c.Discover(ctx, site.source(nil), time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if len(first.Candidates) != 2 || first.State == nil || first.Listings != 1 {
		t.Fatalf("first discovery: %d candidates from %d listings, state %s", len(first.Candidates), first.Listings, first.State)
	}
	t.Run("a fresh discovery is reused: the home page is not read again", func(t *testing.T) {
		again, err := c.Discover(ctx, site.source(first.State), time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		if again.State != nil || len(again.Candidates) != 2 || site.hitCount("/") != 1 {
			t.Errorf("state %s, %d candidates, home page read %d times", again.State, len(again.Candidates), site.hitCount("/"))
		}
	})
	t.Run("a stale discovery is made again", func(t *testing.T) {
		c.now = func() time.Time { return time.Now().Add(2 * time.Hour) }
		defer func() { c.now = time.Now }()
		again, err := c.Discover(ctx, site.source(first.State), time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		if again.State == nil || site.hitCount("/") != 2 {
			t.Errorf("state %s, home page read %d times, want a new discovery", again.State, site.hitCount("/"))
		}
	})
	t.Run("a malformed state is discovered again", func(t *testing.T) {
		again, err := c.Discover(ctx, site.source(json.RawMessage(`"not a site"`)), time.Time{})
		if err != nil || again.State == nil {
			t.Errorf("state %s, err %v, want a new discovery", again.State, err)
		}
	})
	t.Run("a site whose every listing fails is forgotten, for the source to back off", func(t *testing.T) {
		site.broken.Store(true)
		defer site.broken.Store(false)
		failed, err := c.Discover(ctx, site.source(first.State), time.Time{})
		if err == nil || connector.JudgementOf(err).Permanent {
			t.Fatalf("err = %v, want a transient failure", err)
		}
		if string(failed.State) != "null" || failed.ListingErrors != 1 {
			t.Errorf("state %s after %d failed listings, want it forgotten", failed.State, failed.ListingErrors)
		}
	})
}

func TestSitemapAndIndexPageSourcesAreReadAsTheyAre(t *testing.T) {
	site := newTestSite(t)
	c := newConnector()
	got, err := c.Discover(context.Background(), connector.Source{ID: uuid.New(),
		Details: domain.SourceDetails{SourceType: domain.SourceSitemap, URL: site.URL + "/sitemap.xml"}}, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Candidates) != 2 || got.State != nil || site.hitCount("/robots.txt") != 0 {
		t.Errorf("%d candidates, state %s, robots.txt read %d times; want the sitemap alone", len(got.Candidates), got.State, site.hitCount("/robots.txt"))
	}
}
