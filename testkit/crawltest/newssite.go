package crawltest

import (
	"fmt"
	"html"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// NewsSite is a news site as a crawler meets it, readable by every kind of
// web source: robots.txt naming its sitemap, a home page linking its RSS
// feed, the sitemap (/sitemap.xml) and the feed (/feed.xml) of every
// article, an index page (/latest/) linking them, and the article pages,
// each stating when it was published. Publish adds an article as the site
// goes on.
type NewsSite struct {
	*httptest.Server
	mu       sync.Mutex
	articles []newsArticle // oldest first
	hits     map[string]int
}

type newsArticle struct {
	title     string
	published time.Time
}

// NewNewsSite starts a site whose articles were published ago (each a
// duration before now), until the test ends.
func NewNewsSite(t testing.TB, ago ...time.Duration) *NewsSite {
	t.Helper()
	s := &NewsSite{hits: map[string]int{}}
	now := time.Now()
	for i := len(ago) - 1; i >= 0; i-- {
		s.articles = append(s.articles, newsArticle{title: fmt.Sprintf("Story %d", len(ago)-i), published: now.Add(-ago[i])})
	}
	slices.SortFunc(s.articles, func(a, b newsArticle) int { return a.published.Compare(b.published) })
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

// Domain is the site's host and port, as a site source names it.
func (s *NewsSite) Domain() string { return strings.TrimPrefix(s.URL, "http://") }

// FeedURL, SitemapURL and IndexURL are its listings' URLs.
func (s *NewsSite) FeedURL() string    { return s.URL + "/feed.xml" }
func (s *NewsSite) SitemapURL() string { return s.URL + "/sitemap.xml" }
func (s *NewsSite) IndexURL() string   { return s.URL + "/latest/" }

// ArticleURL is the URL of the i-th article published (from 0).
func (s *NewsSite) ArticleURL(i int) string {
	return fmt.Sprintf("%s/news/story-number-%d-of-the-day", s.URL, i)
}

// Publish adds an article published now and returns its URL.
func (s *NewsSite) Publish(title string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.articles = append(s.articles, newsArticle{title: title, published: time.Now()})
	return s.ArticleURL(len(s.articles) - 1)
}

// Hits is how many times path was requested.
func (s *NewsSite) Hits(path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hits[path]
}

func (s *NewsSite) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.hits[r.URL.Path]++
	articles := append([]newsArticle(nil), s.articles...)
	s.mu.Unlock()
	var b strings.Builder
	switch p := r.URL.Path; {
	case p == "/robots.txt":
		write(w, "text/plain", "User-agent: *\nAllow: /\nSitemap: "+s.SitemapURL()+"\n")
	case p == "/":
		write(w, "text/html", `<!doctype html><html><head><title>Daily News</title>
<link rel="alternate" type="application/rss+xml" title="Feed" href="/feed.xml"></head><body><h1>Daily News</h1></body></html>`)
	case p == "/feed.xml":
		fmt.Fprintf(&b, `<?xml version="1.0"?><rss version="2.0"><channel><title>Daily News</title><link>%s/</link>`, s.URL)
		for i := len(articles) - 1; i >= 0; i-- {
			fmt.Fprintf(&b, "\n<item><title>%s</title><link>%s</link><pubDate>%s</pubDate></item>",
				html.EscapeString(articles[i].title), s.ArticleURL(i), articles[i].published.UTC().Format(http.TimeFormat))
		}
		b.WriteString("</channel></rss>")
		write(w, "application/rss+xml", b.String())
	case p == "/sitemap.xml":
		b.WriteString(`<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">`)
		for i := len(articles) - 1; i >= 0; i-- {
			fmt.Fprintf(&b, "\n<url><loc>%s</loc><lastmod>%s</lastmod></url>", s.ArticleURL(i), articles[i].published.UTC().Format(time.RFC3339))
		}
		b.WriteString("</urlset>")
		write(w, "application/xml", b.String())
	case p == "/latest/":
		b.WriteString(`<!doctype html><html><head><title>Latest</title></head><body><h1>Latest</h1><ul>`)
		for i := len(articles) - 1; i >= 0; i-- {
			fmt.Fprintf(&b, "\n<li><a href=\"%s\">%s</a></li>", s.ArticleURL(i), html.EscapeString(articles[i].title))
		}
		b.WriteString("</ul></body></html>")
		write(w, "text/html", b.String())
	default:
		var i int
		if _, err := fmt.Sscanf(p, "/news/story-number-%d-of-the-day", &i); err != nil || i < 0 || i >= len(articles) {
			http.NotFound(w, r)
			return
		}
		a := articles[i]
		write(w, "text/html", fmt.Sprintf(`<!doctype html><html><head><title>%[1]s</title><link rel="canonical" href="%[2]s">
<meta property="og:title" content="%[1]s"><meta property="article:published_time" content="%[3]s"></head>
<body><article><h1>%[1]s</h1><p>%[1]s: what happened, told at length for the reader who wants the whole story.</p></article></body></html>`,
			html.EscapeString(a.title), s.ArticleURL(i), a.published.UTC().Format(time.RFC3339)))
	}
}
