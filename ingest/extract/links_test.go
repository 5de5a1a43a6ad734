package extract

import (
	"slices"
	"testing"
)

func TestLinks(t *testing.T) {
	tests := []struct {
		name string
		page string
		html string
		want []string
	}{
		{
			name: "relative links resolve, fragments go and duplicates collapse",
			page: "https://example.com/news/",
			html: `<a href="story-one">1</a><a href="/news/story-one#comments">1 again</a>
<a href="https://other.example.org/x">other</a><a href="  //cdn.example.com/y ">proto-relative</a>`,
			want: []string{"https://example.com/news/story-one", "https://other.example.org/x", "https://cdn.example.com/y"},
		},
		{
			name: "non-http schemes and bare fragments are dropped",
			page: "https://example.com/",
			html: `<a href="mailto:a@example.com">m</a><a href="javascript:void(0)">j</a><a href="#top">t</a>
<a href="tel:123">tel</a><a href="ftp://example.com/f">f</a><a>no href</a><a href="/ok">ok</a>`,
			want: []string{"https://example.com/ok"},
		},
		{
			name: "base href changes resolution",
			page: "https://example.com/a/b",
			html: `<head><base href="https://mirror.example.com/root/"></head><a href="c">c</a>`,
			want: []string{"https://mirror.example.com/root/c"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Links(tt.page, []byte(tt.html)); !slices.Equal(got, tt.want) {
				t.Errorf("Links = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestFeedLinks(t *testing.T) {
	html := `<html><head>
<link rel="alternate" type="application/rss+xml" title="Example" href="/feed/">
<link rel="alternate" type="application/atom+xml" href="https://example.com/atom.xml">
<link rel="Alternate" type="application/rss+xml; charset=utf-8" href="/feed/">
<link rel="alternate" type="application/rss+xml" title="Comments Feed" href="/comments/feed/">
<link rel="alternate" type="text/html" hreflang="fr" href="/fr/">
<link rel="stylesheet" type="text/css" href="/style.css">
<link rel="alternate" type="application/feed+json" href="/feed.json">
</head></html>`
	want := []string{"https://example.com/feed/", "https://example.com/atom.xml", "https://example.com/feed.json"}
	if got := FeedLinks("https://example.com/", []byte(html)); !slices.Equal(got, want) {
		t.Errorf("FeedLinks = %q, want %q", got, want)
	}
}

func TestLikelyArticle(t *testing.T) {
	const page = "https://www.example.com/world/"
	tests := []struct {
		name string
		link string
		want bool
	}{
		{"a long slug under a section is an article", "https://www.example.com/world/big-storm-hits-the-coast", true},
		{"a bare host without www is the same site", "https://example.com/world/big-storm-hits-the-coast", true},
		{"a dated path with a one-word slug is an article", "https://example.com/2024/05/03/storm", true},
		{"a numeric id is an article", "https://example.com/news/123456", true},
		{"a short numeric id under a section is an article", "https://example.com/article/987", true},
		{"a slug ending in an id is an article", "https://example.com/uk/politics-68123", true},
		{"a named html page below the root is an article", "https://example.com/news/story.html", true},
		{"another site is not a candidate", "https://other.com/world/big-storm-hits-the-coast", false},
		{"a subdomain is another site", "https://blog.example.com/world/big-storm-hits-the-coast", false},
		{"the page itself is not a candidate", "https://www.example.com/world", false},
		{"the site root is not an article", "https://example.com/", false},
		{"a section front is not an article", "https://example.com/politics", false},
		{"a nested section front is not an article", "https://example.com/world/europe", false},
		{"a month archive is not an article", "https://example.com/2024/05/", false},
		{"a day archive is not an article", "https://example.com/2024/05/03", false},
		{"a tag page is not an article", "https://example.com/tag/big-storm-hits-the-coast", false},
		{"a category page is not an article", "https://example.com/category/world-news-today-now", false},
		{"an author page is not an article", "https://example.com/author/jane-mary-doe", false},
		{"a paging link is not an article", "https://example.com/world/page/2", false},
		{"a page query is not an article", "https://example.com/world/big-storm-hits-the-coast?page=2", false},
		{"a login page is not an article", "https://example.com/login", false},
		{"a search page is not an article", "https://example.com/search?q=storm-and-flood", false},
		{"an image is not an article", "https://example.com/img/big-storm-hits-the-coast.jpg", false},
		{"a stylesheet is not an article", "https://example.com/assets/main-site-styles.css", false},
		{"a script is not an article", "https://example.com/static/app-bundle-12345.js", false},
		{"a pdf is not an article", "https://example.com/reports/annual-report-2024-final.pdf", false},
		{"a mailto link is not an article", "mailto:news@example.com", false},
		{"a javascript link is not an article", "javascript:void(0)", false},
		{"a different port is another site", "https://example.com:8443/world/big-storm-hits-the-coast", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := LikelyArticle(page, tt.link); got != tt.want {
				t.Errorf("LikelyArticle(%q, %q) = %v, want %v", page, tt.link, got, tt.want)
			}
		})
	}
}
