package crawl

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/feedsvc/feedsvc/ingest/document"
	"github.com/feedsvc/feedsvc/ingest/extract"
)

var since = time.Date(2024, 5, 2, 0, 0, 0, 0, time.UTC)

func urlset(urls ...string) string {
	return `<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:news="http://www.google.com/schemas/sitemap-news/0.9">` +
		strings.Join(urls, "") + `</urlset>`
}

func sitemapURL(loc, lastmod, published string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "<url><loc>%s</loc>", loc)
	if lastmod != "" {
		fmt.Fprintf(&b, "<lastmod>%s</lastmod>", lastmod)
	}
	if published != "" {
		fmt.Fprintf(&b, "<news:news><news:publication_date>%s</news:publication_date><news:title>Title of %s</news:title></news:news>", published, loc)
	}
	b.WriteString("</url>")
	return b.String()
}

func index(children ...string) string {
	var b strings.Builder
	b.WriteString(`<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">`)
	for _, c := range children {
		loc, lastmod, _ := strings.Cut(c, "|")
		fmt.Fprintf(&b, "<sitemap><loc>%s</loc>", loc)
		if lastmod != "" {
			fmt.Fprintf(&b, "<lastmod>%s</lastmod>", lastmod)
		}
		b.WriteString("</sitemap>")
	}
	b.WriteString("</sitemapindex>")
	return b.String()
}

func gzipped(s string) http.HandlerFunc {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	_, _ = zw.Write([]byte(s))
	_ = zw.Close()
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/x-gzip")
		_, _ = w.Write(buf.Bytes())
	}
}

func candidateURLs(cs []Candidate) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.URL
	}
	slices.Sort(out)
	return out
}

// Judging candidates by date is the caller's (ingest's) business, for every
// kind of listing alike: SitemapCandidates returns every http(s) URL with
// the dates the sitemap gives.
func TestSitemapCandidatesListsEveryURLWithItsDates(t *testing.T) {
	s := newSite(t, map[string]http.HandlerFunc{
		"/news.xml": text("application/xml", urlset(
			sitemapURL("https://example.com/new-by-publication", "", "2024-05-03T08:00:00Z"),
			sitemapURL("https://example.com/old-by-lastmod", "2024-05-01", ""),
			sitemapURL("https://example.com/undated", "", ""),
			sitemapURL("https://example.com/old-but-updated", "2024-05-04", "2024-04-01T00:00:00Z"),
			sitemapURL("https://example.com/exactly-since", "2024-05-02T00:00:00Z", ""),
			sitemapURL("ftp://example.com/not-http", "", ""),
		)),
	})
	got, err := localClient(Options{}).SitemapCandidates(context.Background(), s.URL+"/news.xml", since, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"https://example.com/exactly-since", "https://example.com/new-by-publication", "https://example.com/old-but-updated",
		"https://example.com/old-by-lastmod", "https://example.com/undated"}
	if urls := candidateURLs(got); !slices.Equal(urls, want) {
		t.Fatalf("URLs = %v, want %v", urls, want)
	}
	for _, c := range got {
		switch c.URL {
		case "https://example.com/new-by-publication":
			if c.Title != "Title of https://example.com/new-by-publication" || !c.PublishedAt.Equal(time.Date(2024, 5, 3, 8, 0, 0, 0, time.UTC)) {
				t.Errorf("news fields lost: %+v", c)
			}
		case "https://example.com/old-but-updated":
			if !c.PublishedAt.Equal(time.Date(2024, 4, 1, 0, 0, 0, 0, time.UTC)) || !c.LastMod.Equal(time.Date(2024, 5, 4, 0, 0, 0, 0, time.UTC)) {
				t.Errorf("dates lost: %+v", c)
			}
		}
	}
}

func TestSitemapCandidatesFollowsIndexes(t *testing.T) {
	routes := map[string]http.HandlerFunc{
		"/old.xml":    text("application/xml", urlset(sitemapURL("https://example.com/ancient-story", "", ""))),
		"/recent.xml": text("application/xml", urlset(sitemapURL("https://example.com/recent-story", "2024-05-03", ""))),
		"/undated.xml.gz": gzipped(urlset(sitemapURL("https://example.com/gzip-story", "2024-05-03", ""),
			sitemapURL("https://example.com/recent-story", "2024-05-03", ""))),
		"/broken.xml": status(http.StatusInternalServerError),
		"/nested-index.xml": func(w http.ResponseWriter, r *http.Request) {
			text("application/xml", index("http://"+r.Host+"/leaf.xml|2024-05-03"))(w, r)
		},
		"/leaf.xml":  text("application/xml", urlset(sitemapURL("https://example.com/nested-story", "", "2024-05-03T00:00:00Z"))),
		"/feed.xml":  text("application/rss+xml", `<rss version="2.0"><channel><title>t</title><item><title>Feed story</title><link>/feed-story</link><pubDate>Fri, 03 May 2024 08:00:00 GMT</pubDate></item></channel></rss>`),
		"/index.xml": nil, // set below, needs the server URL
	}
	s := newSite(t, routes)
	routes["/index.xml"] = text("application/xml", index(
		s.URL+"/old.xml|2020-01-01",
		s.URL+"/recent.xml|2024-05-03T10:00:00Z",
		s.URL+"/undated.xml.gz",
		"/broken.xml|2024-05-03",
		s.URL+"/nested-index.xml|2024-05-03",
		s.URL+"/feed.xml",
	))
	got, err := localClient(Options{}).SitemapCandidates(context.Background(), s.URL+"/index.xml", since, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"https://example.com/gzip-story", "https://example.com/nested-story", "https://example.com/recent-story", s.URL + "/feed-story"}
	slices.Sort(want)
	if urls := candidateURLs(got); !slices.Equal(urls, want) {
		t.Errorf("URLs = %v, want %v", urls, want)
	}
	if n := s.hitCount("/old.xml"); n != 0 {
		t.Errorf("a child older than since was fetched %d times", n)
	}
	if n := s.hitCount("/broken.xml"); n != 1 {
		t.Errorf("the broken child was fetched %d times, want 1", n)
	}
}

func TestSitemapCandidatesBoundsIndexes(t *testing.T) {
	routes := map[string]http.HandlerFunc{
		"/all-broken.xml": text("application/xml", index("/b1.xml", "/b2.xml")),
		"/deep.xml":       text("application/xml", index("/deeper.xml")),
		"/deeper.xml":     text("application/xml", index("/deepest.xml")),
		"/deepest.xml":    text("application/xml", index("/leaf.xml")),
		"/leaf.xml":       text("application/xml", urlset(sitemapURL("https://example.com/too-deep-story", "", ""))),
		"/b1.xml":         status(http.StatusNotFound),
		"/b2.xml":         status(http.StatusInternalServerError),
	}
	var many []string
	for i := 0; i < 70; i++ {
		p := fmt.Sprintf("/child-%d.xml", i)
		many = append(many, fmt.Sprintf("%s|2024-05-%02dT00:00:00Z", p, 3+i%20))
		routes[p] = text("application/xml", urlset(sitemapURL(fmt.Sprintf("https://example.com/story-%d", i), "", "")))
	}
	routes["/many.xml"] = text("application/xml", index(many...))
	s := newSite(t, routes)
	c := localClient(Options{})
	ctx := context.Background()

	t.Run("an index of 70 children reads only 50", func(t *testing.T) {
		got, err := c.SitemapCandidates(ctx, s.URL+"/many.xml", since, nil)
		if err != nil {
			t.Fatal(err)
		}
		fetched := 0
		for i := 0; i < 70; i++ {
			fetched += s.hitCount(fmt.Sprintf("/child-%d.xml", i))
		}
		if fetched != maxSitemapChildren || len(got) != maxSitemapChildren {
			t.Errorf("fetched %d children and got %d candidates, want %d", fetched, len(got), maxSitemapChildren)
		}
	})
	t.Run("indexes nested deeper than two levels are not followed", func(t *testing.T) {
		_, err := c.SitemapCandidates(ctx, s.URL+"/deep.xml", since, nil)
		if err == nil {
			t.Error("want an error: the only path leads too deep")
		}
		if n := s.hitCount("/leaf.xml"); n != 0 {
			t.Errorf("the too-deep leaf was fetched %d times", n)
		}
	})
	t.Run("an index whose children all fail is an error", func(t *testing.T) {
		_, err := c.SitemapCandidates(ctx, s.URL+"/all-broken.xml", since, nil)
		var se *StatusError
		if !errors.As(err, &se) {
			t.Errorf("err = %v, want the children's StatusErrors", err)
		}
	})
	t.Run("a missing sitemap is an error", func(t *testing.T) {
		if _, err := c.SitemapCandidates(ctx, s.URL+"/nope.xml", since, nil); err == nil {
			t.Error("want an error")
		}
	})
}

func TestFeedCandidates(t *testing.T) {
	s := newSite(t, map[string]http.HandlerFunc{
		"/news/feed.xml": text("application/rss+xml", `<?xml version="1.0"?><rss version="2.0"><channel><title>t</title>
<item><title>One</title><link>story-one</link><description>&lt;p&gt;First &amp;amp; best&lt;/p&gt;</description>
<pubDate>Fri, 03 May 2024 08:00:00 +0200</pubDate><enclosure url="/img/1.jpg" type="image/jpeg" length="1"/></item>
<item><title>Two</title><link>https://example.com/story-two</link></item>
<item><title>Two again</title><link>https://example.com/story-two</link></item>
</channel></rss>`),
		"/not-a-feed": text("text/html", "<html></html>"),
	})
	c := localClient(Options{})
	got, err := c.FeedCandidates(context.Background(), s.URL+"/news/feed.xml", nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []Candidate{
		{URL: s.URL + "/news/story-one", Title: "One", Description: "First & best", ImageURL: s.URL + "/img/1.jpg", PublishedAt: time.Date(2024, 5, 3, 6, 0, 0, 0, time.UTC)},
		{URL: "https://example.com/story-two", Title: "Two"},
	}
	if len(got) != len(want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("candidate %d = %+v\nwant %+v", i, got[i], want[i])
		}
	}
	if _, err := c.FeedCandidates(context.Background(), s.URL+"/not-a-feed", nil); err == nil {
		t.Error("want an error for an HTML page")
	}
}

func TestIndexPageCandidates(t *testing.T) {
	s := newSite(t, map[string]http.HandlerFunc{
		"/robots.txt": text("text/plain", "User-agent: *\nDisallow: /members\n"),
		"/world/": func(w http.ResponseWriter, r *http.Request) {
			text("text/html; charset=utf-8", `<html><body>
<a href="/">Home</a><a href="/world/">World</a><a href="/world/europe">Europe</a>
<a href="/world/2024/05/03/storm-hits-coast">Storm</a><a href="/world/2024/05/03/storm-hits-coast#comments">Comments</a>
<a href="/tag/weather">Weather</a><a href="/author/jane-doe">Jane</a><a href="/img/photo-of-the-storm.jpg">Photo</a>
<a href="https://other.example.org/some-long-story-here">Elsewhere</a><a href="http://`+r.Host+`/news/123456">By id</a>
</body></html>`)(w, r)
		},
		"/members/": text("text/html", "<html></html>"),
	})
	c := localClient(Options{})
	got, err := c.IndexPageCandidates(context.Background(), s.URL+"/world/", nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{s.URL + "/news/123456", s.URL + "/world/2024/05/03/storm-hits-coast"}
	if urls := candidateURLs(got); !slices.Equal(urls, want) {
		t.Errorf("URLs = %v, want %v", urls, want)
	}
	if _, err := c.IndexPageCandidates(context.Background(), s.URL+"/members/", nil); !errors.Is(err, ErrDisallowed) {
		t.Errorf("err = %v, want ErrDisallowed", err)
	}
}

func TestFetchDocumentThenParseArticle(t *testing.T) {
	s := newSite(t, map[string]http.HandlerFunc{
		"/robots.txt": text("text/plain", "User-agent: *\nDisallow: /premium\n"),
		"/news/storm-hits-coast": text("text/html; charset=iso-8859-1", "<html><head><title>Caf\xe9 storm</title>"+
			`<meta property="og:image" content="/img/storm.jpg"><meta property="article:published_time" content="2024-05-03T08:00:00Z">`+
			`</head><body></body></html>`),
		"/old-url":       redirect("/news/storm-hits-coast"),
		"/report.pdf":    text("application/pdf", "%PDF-1.4"),
		"/premium/story": text("text/html", "<title>Paywalled</title>"),
	})
	c := localClient(Options{})
	ctx := context.Background()

	// The article is what the extractor makes of the fetched document.
	fetchArticle := func(ctx context.Context, u string) (extract.Article, error) {
		doc, err := c.FetchDocument(ctx, u, document.Validators{})
		if err != nil {
			return extract.Article{}, err
		}
		return extract.ParseArticle(doc)
	}
	t.Run("an article is fetched, decoded from its charset and extracted at its final URL", func(t *testing.T) {
		a, err := fetchArticle(ctx, s.URL+"/old-url")
		if err != nil {
			t.Fatal(err)
		}
		want := extract.Article{URL: s.URL + "/news/storm-hits-coast", Title: "Café storm", ImageURL: s.URL + "/img/storm.jpg",
			PublishedAt: time.Date(2024, 5, 3, 8, 0, 0, 0, time.UTC)}
		if a != want {
			t.Errorf("article = %+v\nwant %+v", a, want)
		}
	})
	t.Run("a PDF is not an article", func(t *testing.T) {
		if _, err := fetchArticle(ctx, s.URL+"/report.pdf"); !errors.Is(err, extract.ErrNotHTML) {
			t.Errorf("err = %v, want ErrNotHTML", err)
		}
	})
	t.Run("a page disallowed by robots.txt is not fetched", func(t *testing.T) {
		if _, err := fetchArticle(ctx, s.URL+"/premium/story"); !errors.Is(err, ErrDisallowed) {
			t.Errorf("err = %v, want ErrDisallowed", err)
		}
		if n := s.hitCount("/premium/story"); n != 0 {
			t.Errorf("fetched %d times", n)
		}
	})
}
