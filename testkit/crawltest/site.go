package crawltest

import (
	"fmt"
	"html"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// Site is a small news site whose Atom feed (/feed.atom) names a WebSub
// hub, in its link elements or (hubInHeader) in a Link header, as
// publishers do; its articles are at /articles/<i>.
type Site struct {
	*httptest.Server
	hub         string
	hubInHeader bool
	// NoHub: the feed names no hub. Set it before the site is read.
	NoHub bool

	mu       sync.Mutex
	articles []string // titles, oldest first
	feedHits int
}

// NewSite starts a site with articles of the titles, until the test ends.
func NewSite(t testing.TB, hub string, hubInHeader bool, titles ...string) *Site {
	s := &Site{hub: hub, hubInHeader: hubInHeader, articles: titles}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

// Domain is the site's host and port, as a site source names it.
func (s *Site) Domain() string { return strings.TrimPrefix(s.URL, "http://") }

// FeedURL is the feed's URL, its self link and so the WebSub topic.
func (s *Site) FeedURL() string { return s.URL + "/feed.atom" }

// ArticleURL is the URL of article i.
func (s *Site) ArticleURL(i int) string { return fmt.Sprintf("%s/articles/%d", s.URL, i) }

// Add publishes an article and returns its URL.
func (s *Site) Add(title string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.articles = append(s.articles, title)
	return s.ArticleURL(len(s.articles) - 1)
}

// Polls is how many times the feed was read.
func (s *Site) Polls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.feedHits
}

// Feed is the Atom document, newest entry first.
func (s *Site) Feed() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var b strings.Builder
	now := time.Now().UTC().Format(time.RFC3339)
	fmt.Fprintf(&b, `<?xml version="1.0" encoding="UTF-8"?><feed xmlns="http://www.w3.org/2005/Atom"><title>Pushed News</title><id>%s/</id><updated>%s</updated>`, s.URL, now)
	fmt.Fprintf(&b, `<link rel="self" href="%s"/>`, s.FeedURL())
	if !s.hubInHeader && !s.NoHub {
		fmt.Fprintf(&b, `<link rel="hub" href="%s"/>`, s.hub)
	}
	for i := len(s.articles) - 1; i >= 0; i-- {
		u := s.ArticleURL(i)
		fmt.Fprintf(&b, "\n<entry><title>%s</title><link href=\"%s\"/><id>%s</id><updated>%s</updated><published>%s</published></entry>",
			html.EscapeString(s.articles[i]), u, u, now, now)
	}
	b.WriteString("\n</feed>")
	return b.String()
}

func (s *Site) serve(w http.ResponseWriter, r *http.Request) {
	switch p := r.URL.Path; {
	case p == "/robots.txt":
		write(w, "text/plain", "User-agent: *\nAllow: /\n")
	case p == "/":
		write(w, "text/html", `<!doctype html><html><head><title>Pushed News</title>
<link rel="alternate" type="application/atom+xml" title="Feed" href="/feed.atom"></head><body><h1>Pushed News</h1></body></html>`)
	case p == "/feed.atom":
		s.mu.Lock()
		s.feedHits++
		s.mu.Unlock()
		if s.hubInHeader && !s.NoHub {
			w.Header().Add("Link", fmt.Sprintf(`<%s>; rel="hub", <%s>; rel="self"`, s.hub, s.FeedURL()))
		}
		write(w, "application/atom+xml", s.Feed())
	case strings.HasPrefix(p, "/articles/"):
		var i int
		if _, err := fmt.Sscanf(p, "/articles/%d", &i); err != nil {
			http.NotFound(w, r)
			return
		}
		s.mu.Lock()
		if i < 0 || i >= len(s.articles) {
			s.mu.Unlock()
			http.NotFound(w, r)
			return
		}
		title := s.articles[i]
		s.mu.Unlock()
		now := time.Now().UTC().Format(time.RFC3339)
		write(w, "text/html", fmt.Sprintf(`<!doctype html><html><head><title>%[1]s</title><link rel="canonical" href="%[2]s">
<meta property="article:published_time" content="%[3]s"></head><body><article><h1>%[1]s</h1>
<p>%[1]s: the story in full, long enough to be read as an article by anyone who cares to read it.</p></article></body></html>`,
			html.EscapeString(title), s.ArticleURL(i), now))
	default:
		http.NotFound(w, r)
	}
}

func write(w http.ResponseWriter, contentType, body string) {
	w.Header().Set("Content-Type", contentType)
	_, _ = w.Write([]byte(body))
}
