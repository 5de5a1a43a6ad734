package extract

import (
	"errors"
	"testing"
	"time"

	"github.com/feedsvc/feedsvc/ingest/document"
)

func TestParseArticle(t *testing.T) {
	const pageURL = "https://news.example.com/world/2024/05/storm-hits-coast?utm_source=x#top"
	tests := []struct {
		name string
		html string
		want Article
		// wantType is the page's article type (see articleType).
		wantType string
	}{
		{
			name: "JSON-LD NewsArticle wins over OpenGraph and meta tags",
			html: `<html><head>
<title>Ignored title | Example</title>
<meta property="og:title" content="OG title">
<meta property="og:description" content="OG description">
<meta property="og:image" content="/og.jpg">
<meta property="article:published_time" content="2020-01-01T00:00:00Z">
<link rel="canonical" href="/world/2024/05/storm-hits-coast">
<script type="application/ld+json">
{"@context":"https://schema.org","@type":"NewsArticle","headline":"  Storm &amp; flood hit the coast ",
 "description":"Thousands were evacuated.","image":"https://cdn.example.com/storm.jpg",
 "datePublished":"2024-05-03T08:15:30.123+0200"}
</script></head><body><h1>Body heading</h1></body></html>`,
			want: Article{
				URL:         "https://news.example.com/world/2024/05/storm-hits-coast",
				Title:       "Storm & flood hit the coast",
				Description: "Thousands were evacuated.",
				ImageURL:    "https://cdn.example.com/storm.jpg",
				PublishedAt: time.Date(2024, 5, 3, 6, 15, 30, 123e6, time.UTC),
			},
			wantType: "NewsArticle",
		},
		{
			name: "JSON-LD article inside @graph resolves an image given by @id",
			html: `<html><head><script type="application/ld+json">
{"@context":"https://schema.org","@graph":[
 {"@type":"WebPage","@id":"https://news.example.com/p#webpage","name":"Web page name"},
 {"@type":"ImageObject","@id":"https://news.example.com/p#primaryimage","url":"https://news.example.com/img/lead.png"},
 {"@type":["Article","ReportageNewsArticle"],"headline":"Graph headline","image":{"@id":"https://news.example.com/p#primaryimage"},
  "datePublished":"2024-05-03"}
]}</script></head><body></body></html>`,
			want: Article{
				URL:         "https://news.example.com/world/2024/05/storm-hits-coast?utm_source=x",
				Title:       "Graph headline",
				ImageURL:    "https://news.example.com/img/lead.png",
				PublishedAt: time.Date(2024, 5, 3, 0, 0, 0, 0, time.UTC),
			},
			wantType: "ReportageNewsArticle",
		},
		{
			name: "JSON-LD array with a BlogPosting takes the first image of an ImageObject list",
			html: `<html><head><script type="application/ld+json">
[{"@type":"Organization","name":"Example"},
 {"@type":"BlogPosting","headline":["Array headline"],"description":"Blog text",
  "image":[{"@type":"ImageObject","url":"/a.jpg"},{"@type":"ImageObject","url":"/b.jpg"}],
  "datePublished":"Fri, 03 May 2024 08:15:30 GMT"}]
</script></head><body></body></html>`,
			want: Article{
				URL:         "https://news.example.com/world/2024/05/storm-hits-coast?utm_source=x",
				Title:       "Array headline",
				Description: "Blog text",
				ImageURL:    "https://news.example.com/a.jpg",
				PublishedAt: time.Date(2024, 5, 3, 8, 15, 30, 0, time.UTC),
			},
			wantType: "BlogPosting",
		},
		{
			name: "JSON-LD wrapped in CDATA with raw newlines inside strings is still read",
			html: `<html><head><script type="application/ld+json">//<![CDATA[
{"@type":"NewsArticle","headline":"Line one
line two","datePublished":"2024-05-03T10:00:00-04:00"}
//]]></script></head></html>`,
			want: Article{
				URL:         "https://news.example.com/world/2024/05/storm-hits-coast?utm_source=x",
				Title:       "Line one line two",
				PublishedAt: time.Date(2024, 5, 3, 14, 0, 0, 0, time.UTC),
			},
			wantType: "NewsArticle",
		},
		{
			name: "a forum's opening post marked up as DiscussionForumPosting is read as an article",
			html: `<html><head><title>Battery drains overnight - Trail Forum</title><script type="application/ld+json">
{"@context":"https://schema.org","@type":"DiscussionForumPosting","headline":"Battery drains overnight",
 "text":"Since the update my unit loses half its charge.","datePublished":"2024-01-09T21:14:37+00:00"}
</script></head></html>`,
			want: Article{
				URL:         "https://news.example.com/world/2024/05/storm-hits-coast?utm_source=x",
				Title:       "Battery drains overnight",
				PublishedAt: time.Date(2024, 1, 9, 21, 14, 37, 0, time.UTC),
			},
			wantType: "DiscussionForumPosting",
		},
		{
			name: "OpenGraph-only page resolves relative og:url and og:image",
			html: `<html><head>
<meta property="og:type" content="article">
<meta property="og:title" content="Tom &amp;amp; Jerry return">
<meta property="og:description" content=" A classic,
   reborn. ">
<meta property="og:image" content="../img/tj.jpg">
<meta property="og:url" content="/culture/tom-and-jerry-return">
<meta property="article:published_time" content="2024-05-03T08:15:30Z">
</head><body><p>Short.</p></body></html>`,
			want: Article{
				URL:         "https://news.example.com/culture/tom-and-jerry-return",
				Title:       "Tom & Jerry return",
				Description: "A classic, reborn.",
				ImageURL:    "https://news.example.com/world/2024/img/tj.jpg",
				PublishedAt: time.Date(2024, 5, 3, 8, 15, 30, 0, time.UTC),
			},
			wantType: "article",
		},
		{
			name: "meta-only page uses description, twitter tags and parsely-pub-date",
			html: `<html><head>
<meta name="description" content="Meta description">
<meta name="twitter:title" content="Twitter title">
<meta name="twitter:image" content="//img.example.net/t.jpg">
<meta name="parsely-pub-date" content="2024-05-03T08:15:30Z">
<link rel="Canonical" href="https://news.example.com/canonical-story">
</head><body></body></html>`,
			want: Article{
				URL:         "https://news.example.com/canonical-story",
				Title:       "Twitter title",
				Description: "Meta description",
				ImageURL:    "https://img.example.net/t.jpg",
				PublishedAt: time.Date(2024, 5, 3, 8, 15, 30, 0, time.UTC),
			},
		},
		{
			name: "sailthru.date without a zone is read as UTC",
			html: `<html><head><title>Sailthru</title><meta name="sailthru.date" content="2024-05-03 08:15:30"></head></html>`,
			want: Article{
				URL:         "https://news.example.com/world/2024/05/storm-hits-coast?utm_source=x",
				Title:       "Sailthru",
				PublishedAt: time.Date(2024, 5, 3, 8, 15, 30, 0, time.UTC),
			},
		},
		{
			name: "bare document falls back to h1, time element, first real paragraph and first large image",
			html: `<html><head><title>Storm hits coast | Example News</title></head><body>
<header><h1>Storm hits coast</h1><img src="/logo.png" width="120" height="40"></header>
<nav><p>Home, World, Politics, Business, Science, Culture, Sport, Opinion, Weather and much more to read.</p></nav>
<article>
<time datetime="2024-05-03T08:15:30+01:00">3 May</time>
<p>Too short.</p>
<p>A powerful storm battered the coast overnight, forcing thousands of residents to leave their homes as water rose.</p>
<img src="data:image/gif;base64,R0lGOD" data-src="/img/storm-large.jpg" width="800" height="450">
</article></body></html>`,
			want: Article{
				URL:         "https://news.example.com/world/2024/05/storm-hits-coast?utm_source=x",
				Title:       "Storm hits coast",
				Description: "A powerful storm battered the coast overnight, forcing thousands of residents to leave their homes as water rose.",
				ImageURL:    "https://news.example.com/img/storm-large.jpg",
				PublishedAt: time.Date(2024, 5, 3, 7, 15, 30, 0, time.UTC),
			},
		},
		{
			name: "bare document keeps the title when the h1 is only the site logo",
			html: `<html><head><title>Budget passes after long night</title></head><body>
<h1>Example News</h1><base href="https://other.example.org/dir/">
<article><figure><img src="pic.jpg"></figure></article></body></html>`,
			want: Article{
				URL:      "https://news.example.com/world/2024/05/storm-hits-coast?utm_source=x",
				Title:    "Budget passes after long night",
				ImageURL: "https://other.example.org/dir/pic.jpg",
			},
		},
		{
			name: "canonical pointing at the site root is ignored for an article page",
			html: `<html><head><title>Story</title><link rel="canonical" href="https://news.example.com/"></head></html>`,
			want: Article{
				URL:   "https://news.example.com/world/2024/05/storm-hits-coast?utm_source=x",
				Title: "Story",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseArticle(htmlPage(pageURL, []byte(tt.html)))
			if err != nil {
				t.Fatalf("ParseArticle: %v", err)
			}
			assertArticle(t, got, tt.want)
			if got := articleType([]byte(tt.html)); got != tt.wantType {
				t.Errorf("Type = %q, want %q", got, tt.wantType)
			}
		})
	}
}

func assertArticle(t *testing.T, got, want Article) {
	t.Helper()
	if got.URL != want.URL {
		t.Errorf("URL = %q, want %q", got.URL, want.URL)
	}
	if got.Title != want.Title {
		t.Errorf("Title = %q, want %q", got.Title, want.Title)
	}
	if got.Description != want.Description {
		t.Errorf("Description = %q, want %q", got.Description, want.Description)
	}
	if got.ImageURL != want.ImageURL {
		t.Errorf("ImageURL = %q, want %q", got.ImageURL, want.ImageURL)
	}
	if !got.PublishedAt.Equal(want.PublishedAt) || got.PublishedAt.Location() != time.UTC {
		t.Errorf("PublishedAt = %v, want %v in UTC", got.PublishedAt, want.PublishedAt)
	}
}

func TestParseArticleDecodesLegacyCharsets(t *testing.T) {
	body := []byte("<html><head><meta charset=\"iso-8859-1\"><title>Caf\xe9 cr\xe8me</title></head></html>")
	got, err := ParseArticle(htmlPage("https://example.com/a/cafe-creme-story", body))
	if err != nil {
		t.Fatalf("ParseArticle: %v", err)
	}
	if got.Title != "Café crème" {
		t.Errorf("Title = %q, want %q", got.Title, "Café crème")
	}
}

func TestParseArticleReportsMissingTitle(t *testing.T) {
	_, err := ParseArticle(htmlPage("https://example.com/x", []byte("<html><body><div></div></body></html>")))
	if !errors.Is(err, ErrNoTitle) {
		t.Errorf("err = %v, want ErrNoTitle", err)
	}
}

func TestParseArticleRejectsRelativePageURL(t *testing.T) {
	if _, err := ParseArticle(htmlPage("/relative", []byte("<title>x</title>"))); err == nil {
		t.Error("want an error for a relative page URL")
	}
}

func TestParseArticleTakesACanonicalURLOnlyFromTheSiteThePageCameFrom(t *testing.T) {
	canonical := func(href string) string { return `<link rel="canonical" href="` + href + `">` }
	ogURL := func(content string) string { return `<meta property="og:url" content="` + content + `">` }
	tests := []struct {
		name    string
		pageURL string
		head    string
		want    string
	}{
		{"a canonical on the same host drops the tracking query", "https://news.example.com/a/story?utm_source=x",
			canonical("https://news.example.com/a/story"), "https://news.example.com/a/story"},
		{"a canonical on a sibling subdomain is the same site", "https://m.example.co.uk/a/story",
			canonical("https://www.example.co.uk/a/story"), "https://www.example.co.uk/a/story"},
		{"a canonical on another port of the same named host is the same site", "https://example.com:8443/a/story",
			canonical("https://example.com/a/story"), "https://example.com/a/story"},
		{"host case and a trailing dot do not make another site", "https://News.Example.com./a/story?x=1",
			canonical("https://news.example.com/a/story"), "https://news.example.com/a/story"},
		{"a canonical on another registrable domain is ignored", "https://attacker.example/a/story",
			canonical("https://victim.example.com/real-story"), "https://attacker.example/a/story"},
		{"an og:url on another registrable domain is ignored", "https://attacker.example/a/story",
			ogURL("https://victim.example.com/real-story"), "https://attacker.example/a/story"},
		{"a foreign canonical falls back to a same-site og:url", "https://attacker.example/a/story?ref=x",
			canonical("https://victim.example.com/real-story") + ogURL("/a/story"), "https://attacker.example/a/story"},
		{"a relative canonical under a foreign <base href> is ignored", "https://attacker.example/a/story",
			`<base href="https://victim.example.com/">` + canonical("real-story"), "https://attacker.example/a/story"},
		{"a canonical under a shared public suffix is another site", "https://attacker.github.io/a/story",
			canonical("https://victim.github.io/real-story"), "https://attacker.github.io/a/story"},
		{"a look-alike host ending in the victim's domain is another site", "https://example.com.attacker.net/a/story",
			canonical("https://example.com/real-story"), "https://example.com.attacker.net/a/story"},
		{"a canonical on the same IP address and port is honoured", "http://127.0.0.1:8080/a/story?utm=1",
			canonical("http://127.0.0.1:8080/a/story"), "http://127.0.0.1:8080/a/story"},
		{"a canonical on another port of the same IP address is another site", "http://127.0.0.1:8080/a/story",
			canonical("http://127.0.0.1:9090/real-story"), "http://127.0.0.1:8080/a/story"},
		{"a canonical on another IPv6 address is another site", "http://[2001:db8::1]/a/story",
			canonical("http://[2001:db8::2]/a/story"), "http://[2001:db8::1]/a/story"},
		{"a canonical from localhost to another single-label host is another site", "http://localhost:8080/a/story",
			canonical("http://intranet:8080/a/story"), "http://localhost:8080/a/story"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			html := `<html><head><title>Story</title>` + tt.head + `</head></html>`
			got, err := ParseArticle(htmlPage(tt.pageURL, []byte(html)))
			if err != nil {
				t.Fatalf("ParseArticle: %v", err)
			}
			if got.URL != tt.want {
				t.Errorf("URL = %q, want %q", got.URL, tt.want)
			}
		})
	}
}

// htmlPage is a page as fetching gives it, served as HTML without a
// charset, so that the page's own <meta charset> decides.
func htmlPage(pageURL string, body []byte) document.Document {
	return document.Document{URL: pageURL, ContentType: "text/html", Body: body}
}
