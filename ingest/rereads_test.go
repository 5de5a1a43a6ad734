package ingest_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/feedsvc/feedsvc/ingest/crawl"
	"github.com/feedsvc/feedsvc/testkit/servicetest"
	"github.com/feedsvc/feedsvc/testkit/wait"
)

// rereadSite is a venue with two event pages that its sitemap (answered
// 304 while unchanged) lists once: /events/tagged answers with an ETag and
// 304 to it, as a page behind a CDN does, and /events/plain with no
// validator at all, as many CMS pages do. Either event can be moved to
// another night. It counts full answers and 304s per page.
type rereadSite struct {
	*httptest.Server
	mu          sync.Mutex
	start       time.Time
	moved       map[string]bool
	full        map[string]int
	notModified map[string]int
}

func newRereadSite(t *testing.T) *rereadSite {
	s := &rereadSite{start: time.Now().UTC().Add(72 * time.Hour).Truncate(time.Hour), moved: map[string]bool{}, full: map[string]int{}, notModified: map[string]int{}}
	mux := http.NewServeMux()
	mux.HandleFunc("/robots.txt", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "User-agent: *\nAllow: /\n") })
	mux.HandleFunc("/sitemap.xml", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("If-None-Match") == `"sitemap-1"` {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		w.Header().Set("ETag", `"sitemap-1"`)
		w.Header().Set("Content-Type", "application/xml")
		fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
<url><loc>%[1]s/events/tagged</loc></url>
<url><loc>%[1]s/events/plain</loc></url>
</urlset>`, s.URL)
	})
	mux.HandleFunc("/events/", func(w http.ResponseWriter, r *http.Request) {
		name := r.URL.Path[len("/events/"):]
		if name != "tagged" && name != "plain" {
			http.NotFound(w, r)
			return
		}
		s.mu.Lock()
		start := s.start
		if s.moved[name] {
			start = start.Add(24 * time.Hour)
		}
		body := fmt.Sprintf(`<!doctype html><html><head><title>Concert %[1]s | Hall</title>
<script type="application/ld+json">{"@context":"https://schema.org","@type":"MusicEvent","name":"Concert %[1]s",
"startDate":%[2]q,"endDate":%[3]q,"location":{"@type":"Place","name":"Town Hall","address":"Marktplatz 1, Berlin"}}</script>
</head><body><h1>Concert %[1]s</h1></body></html>`, name, start.Format(time.RFC3339), start.Add(2*time.Hour).Format(time.RFC3339))
		sum := sha256.Sum256([]byte(body))
		etag := `"` + hex.EncodeToString(sum[:8]) + `"`
		unchanged := name == "tagged" && r.Header.Get("If-None-Match") == etag
		if unchanged {
			s.notModified[name]++
		} else {
			s.full[name]++
		}
		s.mu.Unlock()
		if name == "tagged" {
			w.Header().Set("ETag", etag)
		}
		if unchanged {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, body)
	})
	s.Server = httptest.NewServer(mux)
	t.Cleanup(s.Close)
	return s
}

func (s *rereadSite) domain() string { return strings.TrimPrefix(s.URL, "http://") }

func (s *rereadSite) move(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.moved[name] = true
}

func (s *rereadSite) counts(name string) (full, notModified int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.full[name], s.notModified[name]
}

// starts are the feed's events' next starts by title.
func (c client) starts(t *testing.T, feed string) map[string]string {
	r := c.do("GET", "/feeds/events/"+feed+"/items?limit=100", nil).MustStatus(t, http.StatusOK)
	out := map[string]string{}
	list, _ := r.Data()["items"].([]any)
	for _, v := range list {
		it := v.(map[string]any)
		next, _ := it["occurrence"].(map[string]any)["nextOccurrence"].(map[string]any)
		out[it["title"].(string)], _ = next["startDateTime"].(string)
	}
	return out
}

// readAt is when the event document url was last checked and last read
// whole, as the crawler's store says: checked_at moves at every re-read,
// read_at only at a whole one.
func readAt(t *testing.T, h *servicetest.Harness, url string) (checked, read time.Time) {
	t.Helper()
	err := h.Service.DB.Pool.QueryRow(context.Background(),
		`SELECT checked_at, coalesce(read_at, 'epoch') FROM ingest_event_documents WHERE url = $1`, url).Scan(&checked, &read)
	if err != nil {
		t.Fatalf("read the event document %s: %v", url, err)
	}
	return checked, read
}

func TestAnUnchangedEventPageIsNotReadWholeAgainAndAChangedOneIs(t *testing.T) {
	t.Parallel()
	site := newRereadSite(t)
	h := servicetest.Start(t, withoutCrawler())
	cfg := testWorker("w1")
	cfg.RereadWholeEvery = time.Hour
	startWorker(t, h, crawl.Options{AllowPrivateNetworks: true}, cfg)
	c := client{h, h.Key}
	feed := c.do("POST", "/feeds/events", map[string]any{"name": "Hall", "description": "What's on"}).MustStatus(t, http.StatusCreated).Data()["id"].(string)
	c.do("POST", "/feeds/events/"+feed+"/sources", map[string]any{"sourceType": "site", "sourceId": c.siteRecord(site.domain())}).MustStatus(t, http.StatusCreated)
	wait.Until(t, 30*time.Second, "both pages' events in the feed", func() bool { return len(c.starts(t, feed)) == 2 })

	// Polls every 200 ms re-read both pages; give them a few.
	wait.Until(t, 30*time.Second, "three re-reads of the tagged page", func() bool { _, nm := site.counts("tagged"); return nm >= 3 })
	if full, _ := site.counts("tagged"); full != 1 {
		t.Errorf("the tagged page was answered in full %d times; want once, then 304s", full)
	}
	_, plainRead := readAt(t, h, site.URL+"/events/plain")
	wait.Until(t, 30*time.Second, "three more fetches of the plain page", func() bool { full, _ := site.counts("plain"); return full >= 4 })
	checked, read := readAt(t, h, site.URL+"/events/plain")
	if !read.Equal(plainRead) {
		t.Errorf("the plain page, fetched unchanged, was read whole again at %v (first at %v)", read, plainRead)
	}
	if !checked.After(read) {
		t.Errorf("the plain page's re-reads were not recorded: checked at %v, read at %v", checked, read)
	}

	// A change reaches the item at the next poll, from either page.
	before := c.starts(t, feed)
	site.move("tagged")
	site.move("plain")
	wait.Until(t, 30*time.Second, "both moves to reach their items", func() bool {
		now := c.starts(t, feed)
		return now["Concert tagged"] != before["Concert tagged"] && now["Concert plain"] != before["Concert plain"]
	})
	want := site.start.Add(24 * time.Hour).Format("2006-01-02T15:04:05.000Z")
	if got := c.starts(t, feed); got["Concert tagged"] != want || got["Concert plain"] != want {
		t.Fatalf("after the moves the events start %v; want both at %s", got, want)
	}
}

func TestAnUnchangedEventPageIsReadWholeAgainOnceItsTrustRunsOut(t *testing.T) {
	t.Parallel()
	site := newRereadSite(t)
	h := servicetest.Start(t, withoutCrawler())
	cfg := testWorker("w1")
	cfg.RereadWholeEvery = time.Second
	startWorker(t, h, crawl.Options{AllowPrivateNetworks: true}, cfg)
	c := client{h, h.Key}
	feed := c.do("POST", "/feeds/events", map[string]any{"name": "Hall", "description": "What's on"}).MustStatus(t, http.StatusCreated).Data()["id"].(string)
	c.do("POST", "/feeds/events/"+feed+"/sources", map[string]any{"sourceType": "site", "sourceId": c.siteRecord(site.domain())}).MustStatus(t, http.StatusCreated)
	wait.Until(t, 30*time.Second, "both pages' events in the feed", func() bool { return len(c.starts(t, feed)) == 2 })

	// Polled every 200 ms and trusted for a second, the tagged page
	// answers 304 to most re-reads and is read whole about once a second.
	wait.Until(t, 30*time.Second, "the tagged page read whole three times between 304s", func() bool {
		full, nm := site.counts("tagged")
		return full >= 3 && nm >= 2
	})
	_, first := readAt(t, h, site.URL+"/events/plain")
	wait.Until(t, 30*time.Second, "the plain page read whole again", func() bool {
		_, read := readAt(t, h, site.URL+"/events/plain")
		return read.After(first)
	})
}
