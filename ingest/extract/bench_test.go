package extract

import (
	"fmt"
	"strings"
	"testing"
)

// newsPage builds a page shaped like a real news article (about 60 KB): a
// head with many meta tags, inline CSS and scripts, JSON-LD with @graph and
// OpenGraph; a body with navigation, a long article, related stories and a
// footer full of links.
func newsPage() []byte {
	var b strings.Builder
	b.WriteString(`<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">
<title>Storm batters the coast as thousands evacuate | Example News</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="description" content="A powerful storm battered the coast overnight.">
<meta property="og:type" content="article"><meta property="og:site_name" content="Example News">
<meta property="og:title" content="Storm batters the coast as thousands evacuate">
<meta property="og:description" content="A powerful storm battered the coast overnight.">
<meta property="og:image" content="https://cdn.example.com/images/2024/05/storm-1200x630.jpg">
<meta property="og:url" content="https://www.example.com/world/2024/05/03/storm-batters-coast">
<meta property="article:published_time" content="2024-05-03T08:15:30+00:00">
<meta property="article:modified_time" content="2024-05-03T10:02:11+00:00">
<meta name="twitter:card" content="summary_large_image"><meta name="twitter:site" content="@example">
<link rel="canonical" href="https://www.example.com/world/2024/05/03/storm-batters-coast">
<link rel="alternate" type="application/rss+xml" href="/feed/">
`)
	for i := 0; i < 20; i++ {
		fmt.Fprintf(&b, "<meta name=\"tracking-%d\" content=\"value-%d-abcdefghijklmnop\">\n", i, i)
		fmt.Fprintf(&b, "<link rel=\"preload\" as=\"font\" href=\"/fonts/font-%d.woff2\" crossorigin>\n", i)
	}
	b.WriteString("<style>")
	for i := 0; i < 160; i++ {
		fmt.Fprintf(&b, ".c%d{margin:0 auto;padding:%dpx;color:#333;font:16px/1.5 Georgia,serif}\n", i, i%16)
	}
	b.WriteString("</style>\n<script>")
	for i := 0; i < 120; i++ {
		fmt.Fprintf(&b, "window.dataLayer=window.dataLayer||[];dataLayer.push({event:'e%d',value:%d});\n", i, i)
	}
	b.WriteString(`</script>
<script type="application/ld+json">{"@context":"https://schema.org","@graph":[
{"@type":"WebSite","@id":"https://www.example.com/#website","url":"https://www.example.com/","name":"Example News"},
{"@type":"Organization","@id":"https://www.example.com/#org","name":"Example News","logo":{"@type":"ImageObject","url":"https://www.example.com/logo.png"}},
{"@type":"ImageObject","@id":"https://www.example.com/world/2024/05/03/storm-batters-coast#primaryimage","url":"https://cdn.example.com/images/2024/05/storm-1200x630.jpg","width":1200,"height":630},
{"@type":"WebPage","@id":"https://www.example.com/world/2024/05/03/storm-batters-coast","name":"Storm batters the coast","isPartOf":{"@id":"https://www.example.com/#website"}},
{"@type":"NewsArticle","headline":"Storm batters the coast as thousands evacuate","description":"A powerful storm battered the coast overnight.",
 "image":{"@id":"https://www.example.com/world/2024/05/03/storm-batters-coast#primaryimage"},"datePublished":"2024-05-03T08:15:30+00:00",
 "dateModified":"2024-05-03T10:02:11+00:00","author":[{"@type":"Person","name":"Jane Doe"}],"publisher":{"@id":"https://www.example.com/#org"},
 "mainEntityOfPage":{"@id":"https://www.example.com/world/2024/05/03/storm-batters-coast"}}]}</script>
</head><body class="article"><header class="site-header"><a href="/"><img src="/logo.png" alt="Example" width="180" height="40"></a><nav><ul>
`)
	for i := 0; i < 80; i++ {
		fmt.Fprintf(&b, "<li class=\"nav-item\"><a href=\"/section-%d/\" class=\"nav-link\">Section %d</a></li>\n", i, i)
	}
	b.WriteString(`</ul></nav></header><main><article><h1 class="headline">Storm batters the coast as thousands evacuate</h1>
<p class="byline">By <a href="/author/jane-doe">Jane Doe</a> <time datetime="2024-05-03T08:15:30Z">3 May 2024</time></p>
<figure><img src="https://cdn.example.com/images/2024/05/storm-800.jpg" width="800" height="450" alt="Storm"><figcaption>Waves hit the sea wall.</figcaption></figure>
`)
	for i := 0; i < 40; i++ {
		fmt.Fprintf(&b, "<p>Paragraph %d of the report. Residents described winds strong enough to tear roofs from houses, "+
			"while emergency services worked through the night to reach <a href=\"/world/2024/05/03/related-story-%d\">villages cut off</a> by flooding. "+
			"Officials said it was too early to estimate the full cost of the damage.</p>\n", i, i)
	}
	b.WriteString("</article><aside class=\"related\"><h2>Related</h2><ul>\n")
	for i := 0; i < 60; i++ {
		fmt.Fprintf(&b, "<li><a href=\"/world/2024/05/%02d/another-important-story-number-%d\"><img src=\"/thumbs/%d.jpg\" width=\"120\" height=\"80\" loading=\"lazy\" alt=\"\">"+
			"<span>Another important story number %d</span></a></li>\n", i%28+1, i, i, i)
	}
	b.WriteString("</ul></aside></main><footer><ul>\n")
	for i := 0; i < 60; i++ {
		fmt.Fprintf(&b, "<li><a href=\"/info/page-%d\">Footer link %d</a></li>\n", i, i)
	}
	b.WriteString("</ul><p>&copy; 2024 Example News. All rights reserved.</p></footer></body></html>\n")
	return []byte(b.String())
}

func TestNewsPageIsRealistic(t *testing.T) {
	page := newsPage()
	if n := len(page); n < 55_000 || n > 70_000 {
		t.Fatalf("benchmark page is %d bytes, want about 60 KB", n)
	}
	a, err := ParseArticle(htmlPage("https://www.example.com/world/2024/05/03/storm-batters-coast?ref=home", page))
	if err != nil {
		t.Fatalf("ParseArticle: %v", err)
	}
	if articleType(page) != "NewsArticle" || a.ImageURL != "https://cdn.example.com/images/2024/05/storm-1200x630.jpg" || a.PublishedAt.IsZero() {
		t.Errorf("unexpected extraction: %+v", a)
	}
}

// BenchmarkArticle measures single-core extraction throughput on a ~60 KB
// news page. Run: go test ./extract -run '^$' -bench Article -cpu 1
func BenchmarkArticle(b *testing.B) {
	page := newsPage()
	const pageURL = "https://www.example.com/world/2024/05/03/storm-batters-coast"
	b.SetBytes(int64(len(page)))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := ParseArticle(htmlPage(pageURL, page)); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "pages/s")
}
