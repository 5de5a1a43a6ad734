package parse

import (
	"bytes"
	"cmp"
	"net/url"
	"strings"
	"time"

	readability "codeberg.org/readeck/go-readability/v2"
	"codeberg.org/readeck/go-readability/v2/render"
	"golang.org/x/net/html"

	"github.com/feedsvc/feedsvc/ingest/document"
	"github.com/feedsvc/feedsvc/ingest/extract"
)

// maxElements bounds the elements readability scores, so that a page of
// tag soup costs bounded time (a 5 MiB article page has far fewer).
const maxElements = 100_000

// Article is a page's article: its metadata, from the crawler's own
// extractor first (JSON-LD, OpenGraph, meta tags) and readability after,
// and its main text, by readability, as plain text and as safe HTML.
type Article struct {
	// URL is the canonical URL (extract.Article.URL); empty when the page
	// came without a URL and declares no absolute one.
	URL         string
	Title       string
	Description string
	Image       string
	PublishedAt *time.Time
	Author      string
	SiteName    string
	Language    string
	Text        string
	HTML        string
}

// readArticle reads doc's article; nil when it has neither a title nor a
// main text.
func readArticle(doc document.Document) *Article {
	meta, _ := extract.ParseArticle(doc) // a page without a title still has the rest
	a := &Article{
		URL: meta.URL, Title: meta.Title, Description: meta.Description, Image: meta.ImageURL,
	}
	if !meta.PublishedAt.IsZero() {
		at := meta.PublishedAt
		a.PublishedAt = &at
	}
	if strings.HasPrefix(a.URL, UnknownURL) {
		a.URL = "" // a page of unknown address has no canonical URL to tell
	}
	if r, ok := readable(doc); ok {
		a.fill(r)
	}
	if a.Title == "" && a.Text == "" {
		return nil
	}
	return a
}

// readable is readability's reading of doc.
func readable(doc document.Document) (readability.Article, bool) {
	base, err := url.Parse(doc.URL)
	if err != nil {
		return readability.Article{}, false
	}
	// Parsed here, from the UTF-8 the crawler's extractors read: the
	// library's own Parse guesses the charset again, at a quarter of the
	// cost of a parse.
	root, err := html.Parse(bytes.NewReader(extract.ToUTF8(doc.Body, doc.ContentType)))
	if err != nil {
		return readability.Article{}, false
	}
	parser := readability.NewParser()
	parser.MaxElemsToParse = maxElements
	r, err := parser.ParseAndMutate(root, base)
	return r, err == nil
}

// fill takes from readability what the page's metadata did not say, and
// the main text.
func (a *Article) fill(r readability.Article) {
	a.Title = cmp.Or(a.Title, extract.Clean(r.Title()))
	a.Description = cmp.Or(a.Description, extract.Clean(r.Excerpt()))
	a.Image = cmp.Or(a.Image, absolute(r.ImageURL()))
	if a.PublishedAt == nil {
		if t, err := r.PublishedTime(); err == nil && !t.IsZero() {
			t = t.UTC()
			a.PublishedAt = &t
		}
	}
	a.Author = extract.Clean(r.Byline())
	a.SiteName = extract.Clean(r.SiteName())
	a.Language = extract.Clean(r.Language())
	if r.Node == nil {
		return
	}
	a.Text = strings.TrimSpace(render.InnerText(r.Node))
	var b strings.Builder
	if err := html.Render(&b, r.Node); err == nil {
		a.HTML = strings.TrimSpace(extract.SafeHTML(b.String()))
	}
}

// absolute keeps an http(s) URL; anything else (relative, data:) is no
// image URL a client can use.
func absolute(raw string) string {
	return extract.Resolve(nil, raw)
}
