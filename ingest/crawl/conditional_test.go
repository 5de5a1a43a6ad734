package crawl

import (
	"context"
	"net/http"
	"slices"
	"sync"
	"testing"

	"github.com/feedsvc/feedsvc/ingest/document"
)

// memStore is a ValidatorStore in a map.
type memStore struct {
	mu sync.Mutex
	m  map[string]document.Validators
}

func (s *memStore) Validators(u string) document.Validators {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.m[u]
}

func (s *memStore) SetValidators(u string, v document.Validators) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[string]document.Validators{}
	}
	s.m[u] = v
}

// versioned serves a body whose ETag is its version, answering 304 when
// the request names the current one, and counts both kinds of answers.
type versioned struct {
	mu          sync.Mutex
	contentType string
	body        string
	version     string
	full        int
	notModified int
	// conditional counts requests that carried If-None-Match.
	conditional int
}

func (v *versioned) set(version, body string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.version, v.body = version, body
}

func (v *versioned) counts() (full, notModified, conditional int) {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.full, v.notModified, v.conditional
}

func (v *versioned) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	v.mu.Lock()
	defer v.mu.Unlock()
	etag := `"` + v.version + `"`
	if r.Header.Get("If-None-Match") != "" {
		v.conditional++
	}
	if r.Header.Get("If-None-Match") == etag {
		v.notModified++
		w.WriteHeader(http.StatusNotModified)
		return
	}
	v.full++
	w.Header().Set("ETag", etag)
	w.Header().Set("Content-Type", v.contentType)
	_, _ = w.Write([]byte(v.body))
}

func TestListingsAreFetchedConditionally(t *testing.T) {
	leaf := &versioned{contentType: "application/xml", version: "1", body: urlset(sitemapURL("https://example.com/first-story", "", ""))}
	other := &versioned{contentType: "application/xml", version: "1", body: urlset(sitemapURL("https://example.com/other-story", "", ""))}
	idx := &versioned{contentType: "application/xml", version: "1", body: index("/leaf.xml", "/other.xml")}
	feed := &versioned{contentType: "application/rss+xml", version: "1",
		body: `<rss version="2.0"><channel><title>t</title><item><title>Feed story</title><link>/feed-story</link></item></channel></rss>`}
	page := &versioned{contentType: "text/html", version: "1", body: `<html><body><a href="/world/2024/05/03/storm-hits-coast">Storm</a></body></html>`}
	s := newSite(t, map[string]http.HandlerFunc{
		"/leaf.xml": leaf.ServeHTTP, "/other.xml": other.ServeHTTP, "/index.xml": idx.ServeHTTP,
		"/feed.xml": feed.ServeHTTP, "/world/": page.ServeHTTP,
	})
	c := localClient(Options{})
	ctx := context.Background()

	t.Run("an unchanged sitemap answers 304 and lists nothing; a changed one lists its URLs", func(t *testing.T) {
		store := &memStore{}
		got, err := c.SitemapCandidates(ctx, s.URL+"/leaf.xml", since, store)
		if err != nil || len(got) != 1 {
			t.Fatalf("first read = %v, %v", got, err)
		}
		if v := store.Validators(s.URL + "/leaf.xml"); v.ETag != `"1"` {
			t.Fatalf("stored validators = %+v", v)
		}
		got, err = c.SitemapCandidates(ctx, s.URL+"/leaf.xml", since, store)
		if err != nil || len(got) != 0 {
			t.Fatalf("unchanged read = %v, %v; want nothing", got, err)
		}
		if full, nm, _ := leaf.counts(); full != 1 || nm != 1 {
			t.Errorf("full %d, 304 %d; want 1 and 1", full, nm)
		}
		leaf.set("2", urlset(sitemapURL("https://example.com/first-story", "", ""), sitemapURL("https://example.com/second-story", "", "")))
		got, err = c.SitemapCandidates(ctx, s.URL+"/leaf.xml", since, store)
		if err != nil || len(got) != 2 {
			t.Fatalf("changed read = %v, %v; want both stories", got, err)
		}
		if v := store.Validators(s.URL + "/leaf.xml"); v.ETag != `"2"` {
			t.Errorf("stored validators = %+v, want the new ETag", v)
		}
	})
	t.Run("an index is read in full, its children conditionally", func(t *testing.T) {
		store := &memStore{}
		if got, err := c.SitemapCandidates(ctx, s.URL+"/index.xml", since, store); err != nil || len(got) != 3 {
			t.Fatalf("first read = %v, %v; want the three stories", got, err)
		}
		other.set("2", urlset(sitemapURL("https://example.com/other-story", "", ""), sitemapURL("https://example.com/late-story", "", "")))
		got, err := c.SitemapCandidates(ctx, s.URL+"/index.xml", since, store)
		if err != nil {
			t.Fatal(err)
		}
		// The unchanged child lists nothing; the changed one lists all it has.
		want := []string{"https://example.com/late-story", "https://example.com/other-story"}
		if urls := candidateURLs(got); !slices.Equal(urls, want) {
			t.Errorf("URLs = %v, want %v", urls, want)
		}
		if full, _, cond := idx.counts(); full != 2 || cond != 0 {
			t.Errorf("index: %d full answers, %d conditional requests; want 2 and 0", full, cond)
		}
		if v := store.Validators(s.URL + "/index.xml"); v != (document.Validators{}) {
			t.Errorf("the index's validators were kept: %+v", v)
		}
	})
	t.Run("an unchanged feed answers 304 and lists nothing", func(t *testing.T) {
		store := &memStore{}
		if got, err := c.FeedCandidates(ctx, s.URL+"/feed.xml", store); err != nil || len(got) != 1 {
			t.Fatalf("first read = %v, %v", got, err)
		}
		if got, err := c.FeedCandidates(ctx, s.URL+"/feed.xml", store); err != nil || len(got) != 0 {
			t.Fatalf("unchanged read = %v, %v; want nothing", got, err)
		}
		if full, nm, _ := feed.counts(); full != 1 || nm != 1 {
			t.Errorf("full %d, 304 %d; want 1 and 1", full, nm)
		}
	})
	t.Run("an unchanged index page answers 304 and lists nothing", func(t *testing.T) {
		store := &memStore{}
		if got, err := c.IndexPageCandidates(ctx, s.URL+"/world/", store); err != nil || len(got) != 1 {
			t.Fatalf("first read = %v, %v", got, err)
		}
		if got, err := c.IndexPageCandidates(ctx, s.URL+"/world/", store); err != nil || len(got) != 0 {
			t.Fatalf("unchanged read = %v, %v; want nothing", got, err)
		}
		if full, nm, _ := page.counts(); full != 1 || nm != 1 {
			t.Errorf("full %d, 304 %d; want 1 and 1", full, nm)
		}
	})
	t.Run("without a store nothing is conditional", func(t *testing.T) {
		_, _, before := feed.counts()
		if _, err := c.FeedCandidates(ctx, s.URL+"/feed.xml", nil); err != nil {
			t.Fatal(err)
		}
		if _, _, after := feed.counts(); after != before {
			t.Error("a request without a store was conditional")
		}
	})
}
