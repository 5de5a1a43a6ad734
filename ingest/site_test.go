package ingest_test

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// listedIn says which of the fake site's listings name an article.
type listedIn int

const (
	inNewsSitemap listedIn = 1 << iota // Google News sitemap, with publication dates
	inPageSitemap                      // gzipped sitemap, with lastmod only
	inRSS
	inAtom
	inIndex // the home page and the /sections/latest index page
)

// markup is how an article page states its metadata.
type markup int

const (
	jsonLD markup = iota
	openGraph
	noDate // a <title> and a meta description, no date anywhere
)

// fakeArticle is one page of the fake news site.
type fakeArticle struct {
	Slug      string
	Dir       string // path prefix, "news" unless set; robots.txt disallows "private"
	Title     string
	Desc      string // the page's own description; empty means none
	FeedDesc  string // what the feeds say about it
	Image     string // path of the page's image, if any
	Published time.Time
	LastMod   time.Time
	Markup    markup
	In        listedIn
	Status    int           // answer with this status instead of the page
	Delay     time.Duration // answer this late
	Size      int           // pad the page to this many bytes
	// Canonical is the page's <link rel=canonical>; empty means its own
	// clean URL.
	Canonical string
	// Query is appended to the URL the listings give (a tracking
	// parameter, say); the page is served and canonical without it.
	Query string
	// Body is the article's paragraphs ("Short." when empty); Nav and
	// Footer the site's template around it.
	Body        []string
	Nav, Footer string
}

func (a *fakeArticle) path() string {
	dir := a.Dir
	if dir == "" {
		dir = "news"
	}
	return "/" + dir + "/" + a.Slug
}

// listed is the article's path as the site's listings give it.
func (a *fakeArticle) listed() string { return a.path() + a.Query }

// fakeSite is a local news site: robots.txt naming a sitemap index and
// disallowing /private/, a Google News sitemap and a gzipped sitemap behind
// the index, RSS and Atom feeds linked from the home page, an index page,
// and the articles. Its listings (sitemaps, feeds, index pages) carry an
// ETag, their content's hash, and answer a request naming it with 304. It
// counts hits per path and per User-Agent, full answers and 304s per
// listing, and the concurrent requests per sitemap.
type fakeSite struct {
	*httptest.Server
	mu          sync.Mutex
	articles    []*fakeArticle
	hits        map[string]int
	agents      map[string]int
	full        map[string]int
	notModified map[string]int
	inFlight    map[string]int
	maxInFlight map[string]int
	// sitemapDelay holds each sitemap response, widening the window in
	// which two crawls of one source would overlap.
	sitemapDelay time.Duration
	// down makes everything but robots.txt answer 503.
	down bool
	// articleStatus, when set, is what every article page answers, with
	// Retry-After: articleRetryAfter when that is set; the listings are
	// still served, as from a CDN in front of a failing origin.
	articleStatus     int
	articleRetryAfter string
	// robotsStatus, when set, is what robots.txt answers.
	robotsStatus int
}

func newFakeSite(t *testing.T, articles ...*fakeArticle) *fakeSite {
	t.Helper()
	s := &fakeSite{articles: articles, hits: map[string]int{}, agents: map[string]int{}, full: map[string]int{}, notModified: map[string]int{},
		inFlight: map[string]int{}, maxInFlight: map[string]int{}}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

// domain is the site's domain as a site source takes it.
func (s *fakeSite) domain() string { return strings.TrimPrefix(s.URL, "http://") }

func (s *fakeSite) add(a *fakeArticle) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.articles = append(s.articles, a)
}

func (s *fakeSite) setDown(down bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.down = down
}

// setArticlesFailing makes every article page answer status (0 restores
// them), with Retry-After: retryAfter unless it is empty.
func (s *fakeSite) setArticlesFailing(status int, retryAfter string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.articleStatus, s.articleRetryAfter = status, retryAfter
}

// setStatus makes one article answer status (0 restores it).
func (s *fakeSite) setStatus(a *fakeArticle, status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a.Status = status
}

func (s *fakeSite) setRobotsStatus(status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.robotsStatus = status
}

func (s *fakeSite) hitCount(path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hits[path]
}

func (s *fakeSite) totalHits() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, v := range s.hits {
		n += v
	}
	return n
}

// listingAnswers is how often a listing was sent in full and how often it
// answered 304.
func (s *fakeSite) listingAnswers(path string) (full, notModified int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.full[path], s.notModified[path]
}

func (s *fakeSite) agentHits(agent string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.agents[agent]
}

func (s *fakeSite) maxConcurrent(path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.maxInFlight[path]
}

func (s *fakeSite) snapshot() []*fakeArticle {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*fakeArticle(nil), s.articles...)
}

func (s *fakeSite) serve(w http.ResponseWriter, r *http.Request) {
	p := r.URL.Path
	s.mu.Lock()
	s.hits[p]++
	s.agents[r.UserAgent()]++
	down, robotsStatus := s.down, s.robotsStatus
	s.mu.Unlock()
	if down && p != "/robots.txt" {
		http.Error(w, "maintenance", http.StatusServiceUnavailable)
		return
	}
	if robotsStatus != 0 && p == "/robots.txt" {
		http.Error(w, "robots.txt is having a bad day", robotsStatus)
		return
	}
	if strings.HasSuffix(p, ".xml") || strings.HasSuffix(p, ".xml.gz") {
		s.mu.Lock()
		s.inFlight[p]++
		s.maxInFlight[p] = max(s.maxInFlight[p], s.inFlight[p])
		delay := s.sitemapDelay
		s.mu.Unlock()
		defer func() {
			s.mu.Lock()
			s.inFlight[p]--
			s.mu.Unlock()
		}()
		sleep(r, delay)
	}
	base := s.URL
	switch {
	case p == "/robots.txt":
		write(w, "text/plain", "User-agent: *\nDisallow: /private/\n\nSitemap: "+base+"/sitemap_index.xml\n")
	case p == "/":
		s.listing(w, r, "text/html", s.indexPage(base, true))
	case p == "/sections/latest":
		s.listing(w, r, "text/html", s.indexPage(base, false))
	case p == "/sitemap_index.xml":
		now := stamp(time.Now())
		s.listing(w, r, "application/xml", `<?xml version="1.0" encoding="UTF-8"?>
<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
<sitemap><loc>`+base+`/news-sitemap.xml</loc><lastmod>`+now+`</lastmod></sitemap>
<sitemap><loc>`+base+`/sitemap-pages.xml.gz</loc><lastmod>`+now+`</lastmod></sitemap>
</sitemapindex>`)
	case p == "/news-sitemap.xml" || strings.HasPrefix(p, "/sitemaps/"):
		s.listing(w, r, "application/xml", s.newsSitemap(base))
	case p == "/sitemap-pages.xml.gz":
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		_, _ = zw.Write([]byte(s.pageSitemap(base)))
		_ = zw.Close()
		s.listing(w, r, "application/x-gzip", buf.String())
	case p == "/rss.xml":
		s.listing(w, r, "application/rss+xml", s.rss(base))
	case p == "/atom.xml":
		s.listing(w, r, "application/atom+xml", s.atom(base))
	default:
		for _, a := range s.snapshot() {
			if a.path() == p {
				s.article(w, r, a, base)
				return
			}
		}
		http.NotFound(w, r)
	}
}

func (s *fakeSite) article(w http.ResponseWriter, r *http.Request, a *fakeArticle, base string) {
	sleep(r, a.Delay)
	s.mu.Lock()
	status, retryAfter, own := s.articleStatus, s.articleRetryAfter, a.Status
	s.mu.Unlock()
	if status != 0 {
		if retryAfter != "" {
			w.Header().Set("Retry-After", retryAfter)
		}
		http.Error(w, "origin unavailable", status)
		return
	}
	if own != 0 {
		http.Error(w, "broken", own)
		return
	}
	write(w, "text/html; charset=utf-8", a.html(base))
}

// sleep waits d or until the client gives up, so a slow page cannot hold
// the server's shutdown.
func sleep(r *http.Request, d time.Duration) {
	if d <= 0 {
		return
	}
	select {
	case <-time.After(d):
	case <-r.Context().Done():
	}
}

// listing serves a listing with its ETag, or 304 when the request names it.
func (s *fakeSite) listing(w http.ResponseWriter, r *http.Request, contentType, body string) {
	sum := sha256.Sum256([]byte(body))
	etag := `"` + hex.EncodeToString(sum[:8]) + `"`
	s.mu.Lock()
	unchanged := r.Header.Get("If-None-Match") == etag
	if unchanged {
		s.notModified[r.URL.Path]++
	} else {
		s.full[r.URL.Path]++
	}
	s.mu.Unlock()
	w.Header().Set("ETag", etag)
	if unchanged {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	write(w, contentType, body)
}

func write(w http.ResponseWriter, contentType, body string) {
	w.Header().Set("Content-Type", contentType)
	_, _ = w.Write([]byte(body))
}

// stamp is the sites' date format: RFC 3339 with milliseconds, so that
// dates survive the round trip exactly (the service keeps milliseconds).
func stamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z07:00") }

func esc(s string) string { return html.EscapeString(s) }

func (a *fakeArticle) html(base string) string {
	var head strings.Builder
	canonical := a.Canonical
	if canonical == "" {
		canonical = base + a.path()
	}
	fmt.Fprintf(&head, `<link rel="canonical" href="%s">`, canonical)
	switch a.Markup {
	case jsonLD:
		ld := map[string]any{"@context": "https://schema.org", "@type": "NewsArticle", "headline": a.Title}
		if a.Desc != "" {
			ld["description"] = a.Desc
		}
		if a.Image != "" {
			ld["image"] = base + a.Image
		}
		if !a.Published.IsZero() {
			ld["datePublished"] = stamp(a.Published)
		}
		b, _ := json.Marshal(ld)
		fmt.Fprintf(&head, `<title>%s</title><script type="application/ld+json">%s</script>`, esc(a.Title), b)
	case openGraph:
		fmt.Fprintf(&head, `<meta property="og:type" content="article"><meta property="og:title" content="%s">`, esc(a.Title))
		if a.Desc != "" {
			fmt.Fprintf(&head, `<meta property="og:description" content="%s">`, esc(a.Desc))
		}
		if a.Image != "" {
			fmt.Fprintf(&head, `<meta property="og:image" content="%s">`, base+a.Image)
		}
		if !a.Published.IsZero() {
			fmt.Fprintf(&head, `<meta property="article:published_time" content="%s">`, stamp(a.Published))
		}
	case noDate:
		fmt.Fprintf(&head, `<title>%s</title>`, esc(a.Title))
		if a.Desc != "" {
			fmt.Fprintf(&head, `<meta name="description" content="%s">`, esc(a.Desc))
		}
	}
	page := `<!doctype html><html><head><meta charset="utf-8">` + head.String() + `</head><body><h1>` + esc(a.Title) + `</h1><p>Short.</p>`
	if len(a.Body) > 0 {
		page = `<!doctype html><html><head><meta charset="utf-8">` + head.String() + `</head><body>` + a.Nav + `<article><h1>` + esc(a.Title) + `</h1><p>` +
			strings.Join(a.Body, "</p>\n<p>") + `</p></article>` + a.Footer
	}
	if pad := a.Size - len(page); pad > 0 {
		page += "<!--" + strings.Repeat("x", pad) + "-->"
	}
	return page + `</body></html>`
}

func (s *fakeSite) indexPage(base string, home bool) string {
	var b strings.Builder
	b.WriteString(`<!doctype html><html><head><title>Fake News</title>`)
	if home {
		fmt.Fprintf(&b, `<link rel="alternate" type="application/rss+xml" title="RSS" href="%s/rss.xml">`, base)
		fmt.Fprintf(&b, `<link rel="alternate" type="application/atom+xml" title="Atom" href="%s/atom.xml">`, base)
	}
	b.WriteString(`</head><body><ul>`)
	for _, a := range s.snapshot() {
		if a.In&inIndex != 0 {
			fmt.Fprintf(&b, `<li><a href="%s">%s</a></li>`, esc(a.listed()), esc(a.Title))
		}
	}
	b.WriteString(`</ul><a href="/about">About</a><a href="/world">World</a></body></html>`)
	return b.String()
}

func (s *fakeSite) newsSitemap(base string) string {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:news="http://www.google.com/schemas/sitemap-news/0.9">`)
	for _, a := range s.snapshot() {
		if a.In&inNewsSitemap == 0 {
			continue
		}
		fmt.Fprintf(&b, "\n<url><loc>%s</loc><news:news><news:publication><news:name>Fake News</news:name><news:language>en</news:language></news:publication>", esc(base+a.listed()))
		if !a.Published.IsZero() {
			fmt.Fprintf(&b, "<news:publication_date>%s</news:publication_date>", stamp(a.Published))
		}
		fmt.Fprintf(&b, "<news:title>%s</news:title></news:news></url>", esc(a.Title))
	}
	b.WriteString("\n</urlset>")
	return b.String()
}

func (s *fakeSite) pageSitemap(base string) string {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">`)
	for _, a := range s.snapshot() {
		if a.In&inPageSitemap == 0 {
			continue
		}
		fmt.Fprintf(&b, "\n<url><loc>%s</loc>", esc(base+a.listed()))
		if !a.LastMod.IsZero() {
			fmt.Fprintf(&b, "<lastmod>%s</lastmod>", stamp(a.LastMod))
		}
		b.WriteString("</url>")
	}
	b.WriteString("\n</urlset>")
	return b.String()
}

func (s *fakeSite) rss(base string) string {
	var b strings.Builder
	fmt.Fprintf(&b, `<?xml version="1.0" encoding="UTF-8"?><rss version="2.0"><channel><title>Fake News</title><link>%s/</link><description>All the news</description>`, base)
	for _, a := range s.snapshot() {
		if a.In&inRSS == 0 {
			continue
		}
		fmt.Fprintf(&b, "\n<item><title>%s</title><link>%s</link><description>%s</description>", esc(a.Title), esc(base+a.listed()), esc(a.FeedDesc))
		if !a.Published.IsZero() {
			fmt.Fprintf(&b, "<pubDate>%s</pubDate>", a.Published.UTC().Format(time.RFC1123Z))
		}
		b.WriteString("</item>")
	}
	b.WriteString("\n</channel></rss>")
	return b.String()
}

func (s *fakeSite) atom(base string) string {
	var b strings.Builder
	fmt.Fprintf(&b, `<?xml version="1.0" encoding="UTF-8"?><feed xmlns="http://www.w3.org/2005/Atom"><title>Fake News</title><id>%s/</id><updated>%s</updated>`, base, stamp(time.Now()))
	for _, a := range s.snapshot() {
		if a.In&inAtom == 0 {
			continue
		}
		fmt.Fprintf(&b, "\n<entry><title>%s</title><link href=\"%s\"/><id>%s</id><summary>%s</summary>", esc(a.Title), esc(base+a.listed()), esc(base+a.listed()), esc(a.FeedDesc))
		if !a.Published.IsZero() {
			fmt.Fprintf(&b, "<published>%s</published><updated>%s</updated>", stamp(a.Published), stamp(a.Published))
		}
		b.WriteString("</entry>")
	}
	b.WriteString("\n</feed>")
	return b.String()
}
