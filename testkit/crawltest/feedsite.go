package crawltest

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// FeedSite is a small news site as feed readers see it: robots.txt, an RSS
// feed of its articles at /feed.xml (one every gap, the newest an hour
// old) and the article pages. head is added to the feed's channel and
// headers to the feed's response, for what the site says about its own
// freshness (RSS <ttl>, sy:updatePeriod; Cache-Control, Expires,
// Retry-After).
type FeedSite struct {
	*httptest.Server
	articles int
	gap      time.Duration
	newest   time.Time
	head     string
	headers  map[string]string
	mu       sync.Mutex
	feedHits int
}

// NewFeedSite starts a site until the test ends.
func NewFeedSite(t testing.TB, articles int, gap time.Duration, head string, headers map[string]string) *FeedSite {
	t.Helper()
	s := &FeedSite{articles: articles, gap: gap, newest: time.Now().Add(-time.Hour), head: head, headers: headers}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

// Domain is the site's host and port, as a site source names it.
func (s *FeedSite) Domain() string { return strings.TrimPrefix(s.URL, "http://") }

// FeedURL is the RSS feed's URL.
func (s *FeedSite) FeedURL() string { return s.URL + "/feed.xml" }

// Shifted moves every article back by d; call it before the site is read.
func (s *FeedSite) Shifted(d time.Duration) *FeedSite {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.newest = s.newest.Add(-d)
	return s
}

// FeedHits is how many times the feed was read.
func (s *FeedSite) FeedHits() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.feedHits
}

func (s *FeedSite) published(i int) time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.newest.Add(-time.Duration(i) * s.gap)
}

func (s *FeedSite) serve(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.URL.Path == "/robots.txt":
		_, _ = io.WriteString(w, "User-agent: *\nAllow: /\n")
	case r.URL.Path == "/feed.xml":
		s.mu.Lock()
		s.feedHits++
		s.mu.Unlock()
		for k, v := range s.headers {
			w.Header().Set(k, v)
		}
		w.Header().Set("Content-Type", "application/rss+xml")
		var b strings.Builder
		fmt.Fprintf(&b, `<?xml version="1.0"?><rss version="2.0" xmlns:sy="http://purl.org/rss/1.0/modules/syndication/"><channel><title>Site</title><link>%s/</link>%s`, s.URL, s.head)
		for i := 0; i < s.articles; i++ {
			fmt.Fprintf(&b, `<item><title>Story %d</title><link>%s/story/%d</link><pubDate>%s</pubDate></item>`,
				i, s.URL, i, s.published(i).UTC().Format(http.TimeFormat))
		}
		b.WriteString(`</channel></rss>`)
		_, _ = io.WriteString(w, b.String())
	case strings.HasPrefix(r.URL.Path, "/story/"):
		var i int
		if _, err := fmt.Sscanf(r.URL.Path, "/story/%d", &i); err != nil || i >= s.articles {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!doctype html><html><head><title>Story %d</title>
<meta property="og:title" content="Story %d"><meta property="article:published_time" content="%s"></head>
<body><article><h1>Story %d</h1><p>What happened on day %d, told at length for the reader.</p></article></body></html>`,
			i, i, s.published(i).UTC().Format(time.RFC3339), i, i)
	default:
		http.NotFound(w, r)
	}
}
