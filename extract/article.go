package extract

import (
	"bytes"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/PuerkitoBio/goquery"
)

// ErrNoTitle is returned (with whatever else was found) when a page has no
// recognisable title; such a page is almost never an article worth listing.
var ErrNoTitle = errors.New("no title found")

// Article is the metadata of one article page.
type Article struct {
	// URL is the canonical URL: <link rel=canonical>, else og:url, resolved
	// against the page URL, else the page URL itself.
	URL         string
	Title       string
	Description string
	ImageURL    string
	// PublishedAt is in UTC, and zero when the page does not say.
	PublishedAt time.Time
	// Type is the JSON-LD @type (e.g. NewsArticle), else og:type verbatim
	// (e.g. "article"), else empty.
	Type string
}

// Limits of the document fallbacks, chosen so that navigation blurbs and
// icons are not mistaken for the article's lead paragraph and picture.
const (
	minParagraphRunes = 80
	maxParagraphRunes = 500
	minImageWidth     = 300
	minImageHeight    = 200
)

// page gathers the signals of one parsed document.
type page struct {
	doc  *goquery.Document
	base *url.URL
	meta map[string]string
	ld   ldArticle
}

// ParseArticle extracts article metadata from an HTML page fetched from pageURL.
// Each field comes from the first source that has it: JSON-LD, then
// OpenGraph, then other meta tags, then the document body. Relative URLs are
// resolved against pageURL (or the page's <base href>). When no title is
// found, the partial Article is returned with an error wrapping ErrNoTitle.
func ParseArticle(pageURL string, body []byte) (Article, error) {
	base, err := url.Parse(pageURL)
	if err != nil || !base.IsAbs() {
		return Article{}, fmt.Errorf("extract article: invalid page URL %q", pageURL)
	}
	doc, err := goquery.NewDocumentFromReader(bytes.NewReader(ToUTF8(body, "")))
	if err != nil {
		return Article{}, fmt.Errorf("extract article %s: parse html: %w", pageURL, err)
	}
	p := &page{doc: doc, base: documentBase(doc, base), meta: metaTags(doc)}
	p.ld, _ = jsonLDArticle(jsonLDScripts(doc))

	a := Article{
		URL:         p.canonical(pageURL),
		Title:       p.title(),
		Description: p.description(),
		ImageURL:    p.image(),
		PublishedAt: p.published(),
		Type:        firstNonEmpty(p.ld.Type, p.meta["og:type"]),
	}
	if a.Title == "" {
		return a, fmt.Errorf("extract article %s: %w", pageURL, ErrNoTitle)
	}
	return a, nil
}

// documentBase honours <base href>, which changes how every relative URL on
// the page resolves.
func documentBase(doc *goquery.Document, page *url.URL) *url.URL {
	href, ok := doc.Find("base[href]").First().Attr("href")
	if !ok {
		return page
	}
	if b := resolve(page, href); b != "" {
		if u, err := url.Parse(b); err == nil {
			return u
		}
	}
	return page
}

// metaTags maps lower-cased property, name and itemprop keys of <meta>
// elements to their content; the first occurrence wins, as it does for
// crawlers that read og:image.
func metaTags(doc *goquery.Document) map[string]string {
	m := make(map[string]string, 32)
	doc.Find("meta").Each(func(_ int, s *goquery.Selection) {
		content, ok := s.Attr("content")
		if !ok {
			content, ok = s.Attr("datetime")
		}
		if !ok || strings.TrimSpace(content) == "" {
			return
		}
		for _, attr := range []string{"property", "name", "itemprop"} {
			key := strings.ToLower(strings.TrimSpace(s.AttrOr(attr, "")))
			if _, seen := m[key]; key != "" && !seen {
				m[key] = content
			}
		}
	})
	return m
}

func jsonLDScripts(doc *goquery.Document) []string {
	var out []string
	doc.Find("script[type]").Each(func(_ int, s *goquery.Selection) {
		t := strings.ToLower(strings.TrimSpace(s.AttrOr("type", "")))
		if strings.HasPrefix(t, "application/ld+json") {
			out = append(out, s.Text())
		}
	})
	return out
}

// canonical picks <link rel=canonical>, then og:url, then the page URL. A
// canonical pointing at the site root from a deeper page is a common CMS
// misconfiguration and is ignored, as it would merge all articles into one.
func (p *page) canonical(pageURL string) string {
	var canon string
	p.doc.Find("link[rel][href]").EachWithBreak(func(_ int, s *goquery.Selection) bool {
		if hasToken(s.AttrOr("rel", ""), "canonical") {
			canon = s.AttrOr("href", "")
			return false
		}
		return true
	})
	pageIsRoot := isRootPath(p.base.Path)
	for _, c := range []string{canon, p.meta["og:url"]} {
		u := resolve(p.base, c)
		if u == "" {
			continue
		}
		if pu, err := url.Parse(u); err == nil && isRootPath(pu.Path) && !pageIsRoot {
			continue
		}
		return u
	}
	if u := resolve(nil, pageURL); u != "" {
		return u
	}
	return pageURL
}

func isRootPath(p string) bool { return p == "" || p == "/" }

// hasToken reports whether a space-separated attribute such as rel contains
// token, case-insensitively.
func hasToken(attr, token string) bool {
	for _, f := range strings.Fields(attr) {
		if strings.EqualFold(f, token) {
			return true
		}
	}
	return false
}

// The document fallbacks below walk the tree, so they run only when the
// metadata sources came up empty.

func (p *page) title() string {
	if t := firstNonEmpty(p.ld.Headline, p.meta["og:title"], p.meta["twitter:title"]); t != "" {
		return t
	}
	return p.documentTitle()
}

// documentTitle prefers the first <h1> when <title> contains it, because
// <title> usually carries a " | Site name" suffix and the h1 is the clean
// headline; otherwise <title> wins, since a lone h1 is often the site logo.
func (p *page) documentTitle() string {
	title := clean(p.doc.Find("title").First().Text())
	h1 := clean(p.doc.Find("h1").First().Text())
	if h1 != "" && (title == "" || strings.Contains(title, h1)) {
		return h1
	}
	return title
}

func (p *page) description() string {
	if d := firstNonEmpty(p.ld.Description, p.meta["og:description"], p.meta["twitter:description"],
		p.meta["description"], p.meta["dc.description"]); d != "" {
		return d
	}
	return p.firstParagraph()
}

// firstParagraph returns the first paragraph long enough to be prose rather
// than a caption or a navigation blurb, looking in <article> and <main>
// before the whole document.
func (p *page) firstParagraph() string {
	for _, sel := range []string{"article p", "main p", "p"} {
		var found string
		p.doc.Find(sel).EachWithBreak(func(_ int, s *goquery.Selection) bool {
			text := clean(s.Text())
			if len([]rune(text)) < minParagraphRunes || s.Closest("nav,header,footer,aside,figure").Length() > 0 {
				return true
			}
			found = clip(text, maxParagraphRunes)
			return false
		})
		if found != "" {
			return found
		}
	}
	return ""
}

func (p *page) image() string {
	link, _ := p.doc.Find("link[rel=image_src]").First().Attr("href")
	for _, c := range []string{p.ld.Image, p.meta["og:image"], p.meta["og:image:url"], p.meta["og:image:secure_url"],
		p.meta["twitter:image"], p.meta["twitter:image:src"], link} {
		if u := resolve(p.base, c); u != "" {
			return u
		}
	}
	return p.firstLargeImage()
}

// firstLargeImage returns the first <img> that declares a size big enough to
// be a lead picture, or, inside <article> or <figure>, that declares no size
// and does not look like a logo or icon.
func (p *page) firstLargeImage() string {
	var found string
	p.doc.Find("img").EachWithBreak(func(_ int, s *goquery.Selection) bool {
		src := imageSource(s)
		if src == "" {
			return true
		}
		w, h := attrInt(s, "width"), attrInt(s, "height")
		large := w >= minImageWidth || h >= minImageHeight
		unsized := w == 0 && h == 0 && s.Closest("article,figure").Length() > 0 && !looksLikeIcon(src)
		if !large && !unsized {
			return true
		}
		found = resolve(p.base, src)
		return found == ""
	})
	return found
}

// imageSource reads the real source of lazily loaded images, whose src is
// often a placeholder data: URI.
func imageSource(s *goquery.Selection) string {
	for _, attr := range []string{"src", "data-src", "data-lazy-src", "data-original"} {
		v := strings.TrimSpace(s.AttrOr(attr, ""))
		if v != "" && !strings.HasPrefix(v, "data:") {
			return v
		}
	}
	if f := strings.Fields(s.AttrOr("srcset", "")); len(f) > 0 {
		return f[0]
	}
	return ""
}

func attrInt(s *goquery.Selection, name string) int {
	v := strings.TrimSuffix(strings.TrimSpace(s.AttrOr(name, "")), "px")
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0
	}
	return n
}

func looksLikeIcon(src string) bool {
	l := strings.ToLower(src)
	for _, w := range []string{"logo", "icon", "avatar", "sprite", "pixel", "spacer", "badge", ".svg"} {
		if strings.Contains(l, w) {
			return true
		}
	}
	return false
}

// publishedKeys are meta keys that carry a publication date, most reliable
// first (article:published_time is OpenGraph; the rest are CMS and
// analytics conventions).
var publishedKeys = []string{
	"article:published_time", "og:published_time", "datepublished", "article.published",
	"parsely-pub-date", "sailthru.date", "pubdate", "publishdate", "publish-date",
	"publish_date", "date", "dc.date.issued", "dcterms.issued", "dc.date", "dcterms.created",
	"dc.date.created", "cxenseparse:recs:publishtime", "article_date_original", "original-publish-date",
}

func (p *page) published() time.Time {
	if t := ParseDate(p.ld.Published); !t.IsZero() {
		return t
	}
	for _, k := range publishedKeys {
		if t := ParseDate(p.meta[k]); !t.IsZero() {
			return t
		}
	}
	return p.timeElement()
}

// timeElement reads <time datetime>, preferring one marked as the
// publication date (itemprop=datePublished or the pubdate attribute).
func (p *page) timeElement() time.Time {
	for _, sel := range []string{"time[itemprop=datePublished][datetime]", "time[pubdate][datetime]", "time[datetime]"} {
		if t := ParseDate(p.doc.Find(sel).First().AttrOr("datetime", "")); !t.IsZero() {
			return t
		}
	}
	return time.Time{}
}
