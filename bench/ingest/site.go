package main

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"html"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// site is a generated news site: robots.txt naming its sitemap, a home page
// announcing its RSS feed, a sitemap and an RSS feed that both list every
// article, and the articles, each a page of about pageBytes shaped like a
// real one (meta tags, inline CSS and script, JSON-LD, navigation, a long
// body, related links). Listings carry an ETag and answer 304 to it, as
// real sites' do. It counts requests by kind and the most it served at once.
type site struct {
	host      string // host:port, set once listening
	articles  int
	pageBytes int
	// variedText draws each article's body from a vocabulary, so that no
	// two share most of their text; otherwise every body is one template
	// with the numbers changed, and every page shares signature bands
	// with every other (the copy check's worst case).
	variedText bool
	newest     time.Time     // publication date of article 0
	spacing    time.Duration // between consecutive articles, older as i grows

	mu       sync.Mutex
	sitemap  []byte
	feed     []byte
	pages    [][]byte
	inFlight int
	maxIn    int
	requests map[string]int // by kind
	fetched  []int32        // per article
	lastPage time.Time      // when an article was last served

	notModified atomic.Int64
}

func newSite(articles, pageBytes int, window time.Duration) *site {
	return &site{
		articles: articles, pageBytes: pageBytes,
		newest:   time.Now().Add(-time.Hour).Truncate(time.Second),
		spacing:  (window - 2*time.Hour) / time.Duration(max(articles, 1)),
		requests: map[string]int{},
		fetched:  make([]int32, articles),
	}
}

// listen sets the host the pages name and renders them once, so that
// serving them costs the machine little during a run.
func (s *site) listen(host string) {
	s.host = host
	s.sitemap = s.renderSitemap()
	s.feed = s.renderFeed()
	s.pages = make([][]byte, s.articles)
	for i := range s.pages {
		s.pages[i] = s.renderPage(i)
	}
}

// renew dates the same articles from now again (the newest an hour ago)
// and renders them again. Only between runs: nothing is being served.
func (s *site) renew() {
	s.newest = time.Now().Add(-time.Hour).Truncate(time.Second)
	s.listen(s.host)
}

// vocabulary is 3,375 made-up words of three syllables.
var vocabulary = func() []string {
	syl := []string{"ka", "lo", "mi", "ne", "ru", "sa", "te", "vo", "bri", "dal", "fen", "gor", "hul", "jas", "pim"}
	var out []string
	for _, a := range syl {
		for _, b := range syl {
			for _, c := range syl {
				out = append(out, a+b+c)
			}
		}
	}
	return out
}()

// reset clears the counters between runs.
func (s *site) reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.maxIn, s.requests, s.fetched, s.lastPage = 0, map[string]int{}, make([]int32, s.articles), time.Time{}
	s.notModified.Store(0)
}

type siteStats struct {
	MaxConcurrent int
	Requests      map[string]int
	Articles      int // distinct articles fetched
	Refetched     int // article fetches beyond the first
	NotModified   int64
	LastArticle   time.Time // when the last article was served
}

func (s *site) stats() siteStats {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := siteStats{MaxConcurrent: s.maxIn, Requests: map[string]int{}, NotModified: s.notModified.Load(), LastArticle: s.lastPage}
	for k, v := range s.requests {
		st.Requests[k] = v
	}
	for _, n := range s.fetched {
		if n > 0 {
			st.Articles++
			st.Refetched += int(n) - 1
		}
	}
	return st
}

func (s *site) published(i int) time.Time { return s.newest.Add(-time.Duration(i) * s.spacing) }

func (s *site) slug(i int) string {
	return fmt.Sprintf("story-%05d-generated-for-the-ingestion-benchmark", i)
}

func (s *site) articleURL(i int) string {
	return fmt.Sprintf("http://%s/news/%s/%s", s.host, s.published(i).Format("2006/01/02"), s.slug(i))
}

func (s *site) title(i int) string {
	return fmt.Sprintf("Council approves plan number %d for the riverside district after a long debate", i)
}

func (s *site) description(i int) string {
	return fmt.Sprintf("The council voted on plan %d late on Tuesday; residents and businesses had argued for months about the riverside district's future.", i)
}

func (s *site) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.inFlight++
	s.maxIn = max(s.maxIn, s.inFlight)
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.inFlight--
		s.mu.Unlock()
	}()
	p := r.URL.Path
	switch {
	case p == "/robots.txt":
		s.count("robots")
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprintf(w, "User-agent: *\nAllow: /\n\nSitemap: http://%s/sitemap.xml\n", s.host)
	case p == "/":
		s.count("home")
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!DOCTYPE html><html><head><title>Riverside Gazette</title>
<link rel="alternate" type="application/rss+xml" title="Latest" href="/rss.xml"></head>
<body><h1>Riverside Gazette</h1><a href="%s">latest</a></body></html>`, s.articleURL(0))
	case p == "/sitemap.xml":
		s.listing(w, r, "sitemap", "application/xml", s.sitemap)
	case p == "/rss.xml":
		s.listing(w, r, "rss", "application/rss+xml", s.feed)
	case strings.HasPrefix(p, "/news/"):
		i, ok := s.articleIndex(p)
		if !ok {
			s.count("other")
			http.NotFound(w, r)
			return
		}
		s.count("article")
		s.mu.Lock()
		s.fetched[i]++
		s.mu.Unlock()
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write(s.pages[i])
		s.mu.Lock()
		s.lastPage = time.Now()
		s.mu.Unlock()
	default:
		s.count("other")
		http.NotFound(w, r)
	}
}

func (s *site) count(kind string) {
	s.mu.Lock()
	s.requests[kind]++
	s.mu.Unlock()
}

func (s *site) listing(w http.ResponseWriter, r *http.Request, kind, contentType string, body []byte) {
	s.count(kind)
	sum := sha256.Sum256(body)
	etag := `"` + hex.EncodeToString(sum[:8]) + `"`
	w.Header().Set("ETag", etag)
	if r.Header.Get("If-None-Match") == etag {
		s.notModified.Add(1)
		w.WriteHeader(http.StatusNotModified)
		return
	}
	w.Header().Set("Content-Type", contentType)
	_, _ = w.Write(body)
}

// articleIndex reads i from /news/yyyy/mm/dd/story-iiiii-….
func (s *site) articleIndex(p string) (int, bool) {
	slash := strings.LastIndexByte(p, '/')
	rest, ok := strings.CutPrefix(p[slash+1:], "story-")
	if !ok || len(rest) < 5 {
		return 0, false
	}
	i, err := strconv.Atoi(rest[:5])
	if err != nil || i < 0 || i >= s.articles || s.articleURL(i) != "http://"+s.host+p {
		return 0, false
	}
	return i, true
}

func (s *site) renderSitemap() []byte {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n" + `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">` + "\n")
	for i := range s.articles {
		fmt.Fprintf(&b, "<url><loc>%s</loc><lastmod>%s</lastmod></url>\n", s.articleURL(i), s.published(i).Format(time.RFC3339))
	}
	b.WriteString("</urlset>\n")
	return []byte(b.String())
}

func (s *site) renderFeed() []byte {
	var b strings.Builder
	fmt.Fprintf(&b, `<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0"><channel><title>Riverside Gazette</title><link>http://%s/</link><description>Latest stories</description>
`, s.host)
	for i := range s.articles {
		u := s.articleURL(i)
		fmt.Fprintf(&b, "<item><title>%s</title><link>%s</link><guid>%s</guid><pubDate>%s</pubDate><description>%s</description></item>\n",
			html.EscapeString(s.title(i)), u, u, s.published(i).Format(time.RFC1123Z), html.EscapeString(s.description(i)))
	}
	b.WriteString("</channel></rss>\n")
	return []byte(b.String())
}

// renderPage renders article i: its head names it (title, description, image,
// dates, canonical, JSON-LD), its body is filler up to pageBytes.
func (s *site) renderPage(i int) []byte {
	u, title, desc := s.articleURL(i), html.EscapeString(s.title(i)), html.EscapeString(s.description(i))
	pub := s.published(i).Format(time.RFC3339)
	img := fmt.Sprintf("http://%s/images/%05d-1200x630.jpg", s.host, i)
	var b strings.Builder
	b.Grow(s.pageBytes + 4096)
	fmt.Fprintf(&b, `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">
<title>%s | Riverside Gazette</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="description" content="%s">
<meta property="og:type" content="article"><meta property="og:site_name" content="Riverside Gazette">
<meta property="og:title" content="%s"><meta property="og:description" content="%s">
<meta property="og:image" content="%s"><meta property="og:url" content="%s">
<meta property="article:published_time" content="%s">
<link rel="canonical" href="%s">
<link rel="alternate" type="application/rss+xml" href="/rss.xml">
`, title, desc, title, desc, img, u, pub, u)
	for k := range 20 {
		fmt.Fprintf(&b, "<meta name=\"tracking-%d\" content=\"value-%d-abcdefghijklmnop\">\n<link rel=\"preload\" as=\"font\" href=\"/fonts/font-%d.woff2\" crossorigin>\n", k, k, k)
	}
	b.WriteString("<style>")
	for k := range 120 {
		fmt.Fprintf(&b, ".c%d{margin:0 auto;padding:%dpx;color:#333;font:16px/1.5 Georgia,serif}\n", k, k%16)
	}
	b.WriteString("</style>\n<script>")
	for k := range 80 {
		fmt.Fprintf(&b, "window.dataLayer=window.dataLayer||[];dataLayer.push({event:'e%d',value:%d});\n", k, k)
	}
	fmt.Fprintf(&b, `</script>
<script type="application/ld+json">{"@context":"https://schema.org","@graph":[
{"@type":"WebSite","@id":"http://%[1]s/#website","url":"http://%[1]s/","name":"Riverside Gazette"},
{"@type":"NewsArticle","headline":%[2]q,"description":%[3]q,"image":[%[4]q],"datePublished":%[5]q,"dateModified":%[5]q,
 "author":[{"@type":"Person","name":"Jane Doe"}],"mainEntityOfPage":{"@id":%[6]q}}]}</script>
</head><body class="article"><header><nav><ul>
`, s.host, s.title(i), s.description(i), img, pub, u)
	for k := range 60 {
		fmt.Fprintf(&b, "<li class=\"nav-item\"><a href=\"/section-%d/\" class=\"nav-link\">Section %d</a></li>\n", k, k)
	}
	fmt.Fprintf(&b, "</ul></nav></header><main><article><h1>%s</h1>\n<p class=\"byline\">By Jane Doe <time datetime=\"%s\"></time></p>\n", title, pub)
	rng := rand.New(rand.NewPCG(uint64(i), 0x1e57))
	for k := 0; b.Len() < s.pageBytes-6000; k++ {
		if s.variedText {
			b.WriteString("<p>")
			for w := range 40 {
				if w == 20 {
					fmt.Fprintf(&b, "<a href=\"/news/related-%d-%d\">", i, k)
				}
				b.WriteString(vocabulary[rng.IntN(len(vocabulary))])
				if w == 22 {
					b.WriteString("</a>")
				}
				b.WriteByte(' ')
			}
			b.WriteString("</p>\n")
			continue
		}
		fmt.Fprintf(&b, "<p>Paragraph %d of story %d. Residents described the meeting as the longest in memory, "+
			"while officials worked through the night on <a href=\"/news/related-%d-%d\">the details of the plan</a>. "+
			"Nobody could yet say what it would cost or when the first works would start.</p>\n", k, i, i, k)
	}
	b.WriteString("</article><aside><h2>Related</h2><ul>\n")
	for k := 0; b.Len() < s.pageBytes-120; k++ {
		fmt.Fprintf(&b, "<li><a href=\"/news/another-story-%d\"><img src=\"/thumbs/%d.jpg\" width=\"120\" height=\"80\" alt=\"\">Another story %d</a></li>\n", k, k, k)
	}
	b.WriteString("</ul></aside></main><footer><p>&copy; Riverside Gazette</p></footer></body></html>\n")
	return []byte(b.String())
}
