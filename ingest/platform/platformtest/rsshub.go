package platformtest

import (
	"fmt"
	"html"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"time"
)

// RSSHub is a fake of a self-hosted RSSHub instance (docs.rsshub.app): it
// answers the routes of the feeds it was given with RSS 2.0 as RSSHub
// writes it (title, HTML description with the media as <img>, link, guid,
// pubDate, author), an unknown account with RSSHub's 404 error page, and
// a route set to fail with its 503 page.
type RSSHub struct {
	*httptest.Server
	log

	mu     sync.Mutex
	feeds  map[string]RSSFeed
	broken map[string]bool
}

// RSSFeed is one route's feed.
type RSSFeed struct {
	Title string
	Link  string
	Items []RSSItem
}

// RSSItem is an item of a feed.
type RSSItem struct {
	Title, Link, Author string
	// Text and Image make the HTML description.
	Text, Image string
	Published   time.Time
}

// NewRSSHub starts the fake; it stops when the test ends.
func NewRSSHub(t interface{ Cleanup(func()) }) *RSSHub {
	f := &RSSHub{feeds: map[string]RSSFeed{}, broken: map[string]bool{}}
	f.Server = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.Close)
	return f
}

// Route serves a feed at path, e.g. /twitter/user/nasa.
func (f *RSSHub) Route(path string, feed RSSFeed) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.feeds[path] = feed
}

// Break makes path answer 503, as RSSHub does when the platform fails it.
func (f *RSSHub) Break(path string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.broken[path] = true
}

func (f *RSSHub) serve(w http.ResponseWriter, r *http.Request) {
	f.record(Request{Method: r.Method, Path: r.URL.Path, Query: r.URL.Query(), Header: r.Header.Clone(), At: time.Now()})
	if limited, reset := f.limit(); limited {
		w.Header().Set("Retry-After", fmt.Sprint(int(time.Until(reset).Seconds())+1))
		http.Error(w, "Too Many Requests", http.StatusTooManyRequests)
		return
	}
	f.mu.Lock()
	feed, ok := f.feeds[r.URL.Path]
	broken := f.broken[r.URL.Path]
	f.mu.Unlock()
	switch {
	case broken:
		w.Header().Set("Content-Type", "text/html; charset=UTF-8")
		w.WriteHeader(http.StatusServiceUnavailable)
		fmt.Fprint(w, "<!DOCTYPE html><html><body><h1>Looks like something went wrong</h1><p>Error message: FetchError: request failed</p></body></html>")
		return
	case !ok:
		w.Header().Set("Content-Type", "text/html; charset=UTF-8")
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprint(w, "<!DOCTYPE html><html><body><h1>Looks like something went wrong</h1><p>Error message: NotFoundError: The account does not exist</p></body></html>")
		return
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<?xml version="1.0" encoding="UTF-8"?>
<rss xmlns:atom="http://www.w3.org/2005/Atom" version="2.0"><channel><title><![CDATA[%s]]></title><link>%s</link>
<atom:link href="%s%s" rel="self" type="application/rss+xml"></atom:link>
<description><![CDATA[%s - Powered by RSSHub]]></description><generator>RSSHub</generator><language>en</language><ttl>5</ttl>
`, feed.Title, html.EscapeString(feed.Link), f.URL, r.URL.Path, feed.Title)
	for _, it := range feed.Items {
		desc := html.EscapeString(it.Text)
		if it.Image != "" {
			desc += `<br><img src="` + html.EscapeString(it.Image) + `" referrerpolicy="no-referrer">`
		}
		fmt.Fprintf(&b, `<item><title><![CDATA[%s]]></title><description><![CDATA[%s]]></description><pubDate>%s</pubDate>
<guid isPermaLink="false">%s</guid><link>%s</link><author><![CDATA[%s]]></author></item>
`, it.Title, desc, it.Published.UTC().Format(time.RFC1123), html.EscapeString(it.Link), html.EscapeString(it.Link), it.Author)
	}
	b.WriteString("</channel></rss>")
	w.Header().Set("Content-Type", "application/xml; charset=utf-8")
	_, _ = w.Write([]byte(b.String()))
}
