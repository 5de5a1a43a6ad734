package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// web is the fake web: n sites, each on a loopback address of its own
// (127.0.x.y, one listener each, all on one port), each with robots.txt
// naming its sitemap, a home page announcing its RSS feed, a sitemap and
// the feed (both answering their ETag with 304), and its articles. A site
// starts with one article an hour old; publish adds one to a share of the
// sites.
type web struct {
	port  int
	sites []*fakeSite
	lns   []net.Listener
	srv   *http.Server

	feedFull, feed304, sitemapFull, sitemap304, articles, other atomic.Int64
}

type fakeSite struct {
	host string
	mu   sync.Mutex
	pub  []time.Time // publication time of each article
	// feed and sitemap are rendered once per change, with their ETag.
	feed, sitemap         []byte
	feedETag, sitemapETag string
}

// siteAddr is the loopback address of site i: 127.0.1.1 onwards, skipping
// 127.0.0.x (127.0.0.1 is everyone's).
func siteAddr(i int) string { return fmt.Sprintf("127.0.%d.%d", 1+i/250, 1+i%250) }

func newWeb(n, port int) (*web, error) {
	w := &web{port: port}
	w.srv = &http.Server{Handler: w, ReadHeaderTimeout: 10 * time.Second}
	now := time.Now()
	for i := range n {
		s := &fakeSite{host: fmt.Sprintf("%s:%d", siteAddr(i), port), pub: []time.Time{now.Add(-time.Hour)}}
		s.render()
		w.sites = append(w.sites, s)
		ln, err := net.Listen("tcp", s.host)
		if err != nil {
			w.close()
			return nil, fmt.Errorf("listen on %s: %w", s.host, err)
		}
		w.lns = append(w.lns, ln)
		go func() { _ = w.srv.Serve(ln) }()
	}
	return w, nil
}

func (w *web) close() { _ = w.srv.Shutdown(context.Background()) }

// publish adds an article, dated now, to every step-th site starting at
// offset.
func (w *web) publish(share float64, round int) int {
	if share <= 0 {
		return 0
	}
	step := max(1, int(1/share))
	n := 0
	for i := round % step; i < len(w.sites); i += step {
		s := w.sites[i]
		s.mu.Lock()
		s.pub = append(s.pub, time.Now())
		s.render()
		s.mu.Unlock()
		n++
	}
	return n
}

func etag(b []byte) string {
	h := sha256.Sum256(b)
	return `"` + hex.EncodeToString(h[:8]) + `"`
}

// render rebuilds the listings; s.mu must be held (or s unshared).
func (s *fakeSite) render() {
	var f, m strings.Builder
	fmt.Fprintf(&f, `<?xml version="1.0" encoding="UTF-8"?><rss version="2.0"><channel><title>Site %s</title><link>http://%s/</link><description>News of %s</description>`, s.host, s.host, s.host)
	m.WriteString(`<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">`)
	for k := len(s.pub) - 1; k >= 0 && k >= len(s.pub)-20; k-- {
		u := fmt.Sprintf("http://%s/news/%d-story-number-%d-of-this-site", s.host, k, k)
		fmt.Fprintf(&f, `<item><title>Story %d of %s</title><link>%s</link><guid>%s</guid><pubDate>%s</pubDate><description>What happened, in a sentence or two, for the reader of the feed.</description></item>`,
			k, s.host, u, u, s.pub[k].UTC().Format(time.RFC1123Z))
		fmt.Fprintf(&m, `<url><loc>%s</loc><lastmod>%s</lastmod></url>`, u, s.pub[k].UTC().Format(time.RFC3339))
	}
	f.WriteString(`</channel></rss>`)
	m.WriteString(`</urlset>`)
	s.feed, s.sitemap = []byte(f.String()), []byte(m.String())
	s.feedETag, s.sitemapETag = etag(s.feed), etag(s.sitemap)
}

func (w *web) site(host string) *fakeSite {
	var a, b, c, d, port int
	if _, err := fmt.Sscanf(host, "%d.%d.%d.%d:%d", &a, &b, &c, &d, &port); err != nil || b != 0 || c < 1 {
		return nil
	}
	i := (c-1)*250 + d - 1
	if i < 0 || i >= len(w.sites) {
		return nil
	}
	return w.sites[i]
}

func (w *web) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	s := w.site(r.Host)
	if s == nil {
		http.NotFound(rw, r)
		return
	}
	switch p := r.URL.Path; {
	case p == "/robots.txt":
		w.other.Add(1)
		fmt.Fprintf(rw, "User-agent: *\nAllow: /\nSitemap: http://%s/sitemap.xml\n", s.host)
	case p == "/":
		w.other.Add(1)
		rw.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(rw, `<!doctype html><html><head><title>Site %s</title><link rel="alternate" type="application/rss+xml" href="/feed.xml"></head><body><h1>Site %s</h1></body></html>`, s.host, s.host)
	case p == "/feed.xml", p == "/sitemap.xml":
		s.mu.Lock()
		body, tag := s.feed, s.feedETag
		full, nm := &w.feedFull, &w.feed304
		ct := "application/rss+xml"
		if p == "/sitemap.xml" {
			body, tag, full, nm, ct = s.sitemap, s.sitemapETag, &w.sitemapFull, &w.sitemap304, "application/xml"
		}
		s.mu.Unlock()
		rw.Header().Set("ETag", tag)
		if r.Header.Get("If-None-Match") == tag {
			nm.Add(1)
			rw.WriteHeader(http.StatusNotModified)
			return
		}
		full.Add(1)
		rw.Header().Set("Content-Type", ct)
		_, _ = rw.Write(body)
	case strings.HasPrefix(p, "/news/"):
		w.articles.Add(1)
		var k int
		if _, err := fmt.Sscanf(p, "/news/%d-", &k); err != nil {
			http.NotFound(rw, r)
			return
		}
		s.mu.Lock()
		if k >= len(s.pub) {
			s.mu.Unlock()
			http.NotFound(rw, r)
			return
		}
		at := s.pub[k]
		s.mu.Unlock()
		rw.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(rw, `<!doctype html><html><head><title>Story %d of %s</title><meta name="description" content="What happened, in a sentence or two.">
<meta property="og:title" content="Story %d of %s"><meta property="article:published_time" content="%s"></head>
<body><article><h1>Story %d of %s</h1><p>%s</p></article></body></html>`, k, s.host, k, s.host, at.UTC().Format(time.RFC3339), k, s.host,
			strings.Repeat("A paragraph of the story, as long as a real one tends to be. ", 40))
	default:
		w.other.Add(1)
		http.NotFound(rw, r)
	}
}

type webCounts struct{ FeedFull, Feed304, SitemapFull, Sitemap304, Articles, Other int64 }

func (w *web) counts() webCounts {
	return webCounts{w.feedFull.Load(), w.feed304.Load(), w.sitemapFull.Load(), w.sitemap304.Load(), w.articles.Load(), w.other.Load()}
}

func (a webCounts) minus(b webCounts) webCounts {
	return webCounts{a.FeedFull - b.FeedFull, a.Feed304 - b.Feed304, a.SitemapFull - b.SitemapFull, a.Sitemap304 - b.Sitemap304,
		a.Articles - b.Articles, a.Other - b.Other}
}
