// Package fakeweb is the benchmarks' fake web: n sites, each on a loopback
// address of its own (127.0.x.y, one listener each, all on one port), each
// with robots.txt naming its sitemap, a home page announcing its RSS feed,
// a sitemap and the feed (both answering their ETag with 304), and its
// articles (answering theirs with 304 too, as pages behind a CDN do), each dated with the instant it was published (the feed's
// pubDate, the sitemap's lastmod and the page's article:published_time).
// A venue's articles are event pages: each carries a schema.org Event in
// JSON-LD, which event feeds take. bench/polling and bench/freshness
// crawl it.
package fakeweb

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Options shape every site's listings.
type Options struct {
	// FeedItems and SitemapItems are how many of a site's newest
	// articles its feed and its sitemap list (20 each when 0).
	FeedItems, SitemapItems int
}

// Web is the running fake web.
type Web struct {
	port  int
	opts  Options
	Sites []*Site
	lns   []net.Listener
	srv   *http.Server

	feedFull, feed304, sitemapFull, sitemap304, articles, articles304, other atomic.Int64
}

// Site is one site.
type Site struct {
	Host  string
	Venue bool // its articles are event pages

	web *Web
	mu  sync.Mutex
	pub []time.Time // publication instant of each article, oldest first
	// feed and sitemap are rendered once per change, with their ETag.
	feed, sitemap         []byte
	feedETag, sitemapETag string
}

// siteAddr is the loopback address of site i: 127.0.1.1 onwards, skipping
// 127.0.0.x (127.0.0.1 is everyone's).
func siteAddr(i int) string { return fmt.Sprintf("127.0.%d.%d", 1+i/250, 1+i%250) }

// New starts n sites on port. Site i starts with the articles history(i)
// returns (publication instants, oldest first; nil for none) and is a
// venue when venue(i) (nil for none).
func New(n, port int, opts Options, history func(i int) []time.Time, venue func(i int) bool) (*Web, error) {
	if opts.FeedItems <= 0 {
		opts.FeedItems = 20
	}
	if opts.SitemapItems <= 0 {
		opts.SitemapItems = 20
	}
	w := &Web{port: port, opts: opts}
	w.srv = &http.Server{Handler: w, ReadHeaderTimeout: 10 * time.Second}
	for i := range n {
		s := &Site{Host: fmt.Sprintf("%s:%d", siteAddr(i), port), web: w}
		if history != nil {
			s.pub = history(i)
		}
		if venue != nil {
			s.Venue = venue(i)
		}
		s.render()
		w.Sites = append(w.Sites, s)
		ln, err := net.Listen("tcp", s.Host)
		if err != nil {
			w.Close()
			return nil, fmt.Errorf("listen on %s: %w", s.Host, err)
		}
		w.lns = append(w.lns, ln)
		go func() { _ = w.srv.Serve(ln) }()
	}
	return w, nil
}

// Close stops every site.
func (w *Web) Close() { _ = w.srv.Shutdown(context.Background()) }

// Hosts are the sites' hosts (address and port), in order.
func (w *Web) Hosts() []string {
	out := make([]string, len(w.Sites))
	for i, s := range w.Sites {
		out[i] = s.Host
	}
	return out
}

// Publish adds an article published now and returns its number and
// instant: the listings show it from that instant on.
func (s *Site) Publish() (int, time.Time) {
	at := time.Now()
	return s.PublishAt(at), at
}

// PublishAt publishes the site's next article, dated at, and returns its
// number: a second web publishing what the first did at the same instant.
func (s *Site) PublishAt(at time.Time) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pub = append(s.pub, at)
	s.render()
	return len(s.pub) - 1
}

// Published is the publication instant of article k, if there is one.
func (s *Site) Published(k int) (time.Time, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if k < 0 || k >= len(s.pub) {
		return time.Time{}, false
	}
	return s.pub[k], true
}

// ArticleURL is the URL of article k, as the listings give it.
func (s *Site) ArticleURL(k int) string {
	return fmt.Sprintf("http://%s/news/%d-story-number-%d-of-this-site", s.Host, k, k)
}

// EventName is the name of the event article k of a venue announces.
func (s *Site) EventName(k int) string { return fmt.Sprintf("Concert %d at %s", k, s.Host) }

// ParseArticleURL is the site and article number of a URL ArticleURL made.
func (w *Web) ParseArticleURL(u string) (site, k int, ok bool) {
	rest, found := strings.CutPrefix(u, "http://")
	host, path, _ := strings.Cut(rest, "/")
	if !found {
		return 0, 0, false
	}
	site, ok = w.index(host)
	if !ok {
		return 0, 0, false
	}
	if _, err := fmt.Sscanf(path, "news/%d-", &k); err != nil {
		return 0, 0, false
	}
	return site, k, true
}

// ParseEventName is the site and article number of a name EventName made.
func (w *Web) ParseEventName(name string) (site, k int, ok bool) {
	var host string
	if _, err := fmt.Sscanf(name, "Concert %d at %s", &k, &host); err != nil {
		return 0, 0, false
	}
	site, ok = w.index(host)
	return site, k, ok
}

func etag(b []byte) string {
	h := sha256.Sum256(b)
	return `"` + hex.EncodeToString(h[:8]) + `"`
}

// render rebuilds the listings; s.mu must be held (or s unshared).
func (s *Site) render() {
	var f, m strings.Builder
	fmt.Fprintf(&f, `<?xml version="1.0" encoding="UTF-8"?><rss version="2.0"><channel><title>Site %s</title><link>http://%s/</link><description>News of %s</description>`, s.Host, s.Host, s.Host)
	m.WriteString(`<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">`)
	for k := len(s.pub) - 1; k >= 0 && k >= len(s.pub)-max(s.web.opts.FeedItems, s.web.opts.SitemapItems); k-- {
		u := s.ArticleURL(k)
		if k >= len(s.pub)-s.web.opts.FeedItems {
			fmt.Fprintf(&f, `<item><title>Story %d of %s</title><link>%s</link><guid>%s</guid><pubDate>%s</pubDate><description>What happened, in a sentence or two, for the reader of the feed.</description></item>`,
				k, s.Host, u, u, s.pub[k].UTC().Format(time.RFC1123Z))
		}
		if k >= len(s.pub)-s.web.opts.SitemapItems {
			fmt.Fprintf(&m, `<url><loc>%s</loc><lastmod>%s</lastmod></url>`, u, s.pub[k].UTC().Format(time.RFC3339))
		}
	}
	f.WriteString(`</channel></rss>`)
	m.WriteString(`</urlset>`)
	s.feed, s.sitemap = []byte(f.String()), []byte(m.String())
	s.feedETag, s.sitemapETag = etag(s.feed), etag(s.sitemap)
}

func (w *Web) index(host string) (int, bool) {
	var a, b, c, d, port int
	if _, err := fmt.Sscanf(host, "%d.%d.%d.%d:%d", &a, &b, &c, &d, &port); err != nil || b != 0 || c < 1 {
		return 0, false
	}
	i := (c-1)*250 + d - 1
	if i < 0 || i >= len(w.Sites) {
		return 0, false
	}
	return i, true
}

func (w *Web) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	i, ok := w.index(r.Host)
	if !ok {
		http.NotFound(rw, r)
		return
	}
	s := w.Sites[i]
	switch p := r.URL.Path; {
	case p == "/robots.txt":
		w.other.Add(1)
		fmt.Fprintf(rw, "User-agent: *\nAllow: /\nSitemap: http://%s/sitemap.xml\n", s.Host)
	case p == "/":
		w.other.Add(1)
		rw.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(rw, `<!doctype html><html><head><title>Site %s</title><link rel="alternate" type="application/rss+xml" href="/feed.xml"></head><body><h1>Site %s</h1></body></html>`, s.Host, s.Host)
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
		var k int
		if _, err := fmt.Sscanf(p, "/news/%d-", &k); err != nil {
			w.articles.Add(1)
			http.NotFound(rw, r)
			return
		}
		at, ok := s.Published(k)
		if !ok {
			w.articles.Add(1)
			http.NotFound(rw, r)
			return
		}
		page := []byte(fmt.Sprintf(`<!doctype html><html><head><title>Story %d of %s</title><meta name="description" content="What happened, in a sentence or two.">
<meta property="og:title" content="Story %d of %s"><meta property="article:published_time" content="%s">%s</head>
<body><article><h1>Story %d of %s</h1>%s</article></body></html>`, k, s.Host, k, s.Host, at.UTC().Format(time.RFC3339), s.event(k, at), k, s.Host,
			storyText(s.Host, k)))
		tag := etag(page)
		rw.Header().Set("ETag", tag)
		rw.Header().Set("Last-Modified", at.UTC().Format(http.TimeFormat))
		if r.Header.Get("If-None-Match") == tag {
			w.articles304.Add(1)
			rw.WriteHeader(http.StatusNotModified)
			return
		}
		w.articles.Add(1)
		rw.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = rw.Write(page)
	default:
		w.other.Add(1)
		http.NotFound(rw, r)
	}
}

// event is the JSON-LD of the event a venue's article k (published at)
// announces: a concert three days later. Other sites' articles have none.
// storyText is the body of the site's k-th article: five paragraphs of
// sixty words drawn from a small vocabulary, the same at every request
// (the page's ETag depends on it) and different for every article. Every
// article of every site once carried the same repeated sentence, and the
// service rightly took them all for copies of one story (docs/copies.md):
// a real web's stories differ in their text.
func storyText(host string, k int) string {
	h := fnv.New64a()
	fmt.Fprintf(h, "%s/%d", host, k)
	r := rand.New(rand.NewPCG(h.Sum64(), uint64(k)))
	var b strings.Builder
	for range 5 {
		b.WriteString("<p>")
		for j := range 60 {
			w := storyWords[r.IntN(len(storyWords))]
			if j == 0 {
				w = strings.ToUpper(w[:1]) + w[1:]
			} else {
				b.WriteByte(' ')
			}
			b.WriteString(w)
		}
		b.WriteString(".</p>")
	}
	return b.String()
}

var storyWords = strings.Fields(`council budget city mayor school river bridge station market festival
	police court judge trial company profit workers union strike hospital doctor patient nurse
	weather storm flood harbour ship port airport train road traffic election vote party minister
	report study science museum library theatre concert team match season coach player goal
	village farm harvest price energy power water housing rent tenant landlord plan project
	committee review decision protest crowd street square park garden tree forest fire rescue
	police officer witness statement evidence inquiry audit contract tender council member
	business shop owner customer product launch factory plant engine fuel climate summer winter
	spring autumn morning evening week month year budget deficit tax rate bank loan interest
	children parents teachers students university college exam result award prize author book
	film director actor music singer band album tour ticket venue stage crowd record history`)

func (s *Site) event(k int, at time.Time) string {
	if !s.Venue {
		return ""
	}
	start := at.UTC().Add(72 * time.Hour).Truncate(time.Minute)
	return fmt.Sprintf(`
<script type="application/ld+json">{"@context":"https://schema.org","@type":"MusicEvent","name":%q,"startDate":%q,"endDate":%q,
"url":%q,"location":{"@type":"Place","name":"Town Hall","address":{"@type":"PostalAddress","streetAddress":"Marktplatz 1","addressLocality":"Berlin","addressCountry":"DE"}}}</script>`,
		s.EventName(k), start.Format(time.RFC3339), start.Add(2*time.Hour).Format(time.RFC3339), s.ArticleURL(k))
}

// Counts are the requests the web answered, by kind.
type Counts struct{ FeedFull, Feed304, SitemapFull, Sitemap304, Articles, Articles304, Other int64 }

// Counts so far.
func (w *Web) Counts() Counts {
	return Counts{w.feedFull.Load(), w.feed304.Load(), w.sitemapFull.Load(), w.sitemap304.Load(), w.articles.Load(), w.articles304.Load(), w.other.Load()}
}

// Minus is the requests between b and a.
func (a Counts) Minus(b Counts) Counts {
	return Counts{a.FeedFull - b.FeedFull, a.Feed304 - b.Feed304, a.SitemapFull - b.SitemapFull, a.Sitemap304 - b.Sitemap304,
		a.Articles - b.Articles, a.Articles304 - b.Articles304, a.Other - b.Other}
}

// String is the counts as the benchmarks print them.
func (a Counts) String() string {
	return fmt.Sprintf("feed %d full + %d 304, sitemap %d full + %d 304, articles %d full + %d 304, other %d",
		a.FeedFull, a.Feed304, a.SitemapFull, a.Sitemap304, a.Articles, a.Articles304, a.Other)
}
