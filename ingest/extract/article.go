package extract

import (
	"bytes"
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/PuerkitoBio/goquery"
	"golang.org/x/net/html/atom"
	"golang.org/x/net/idna"
	"golang.org/x/net/publicsuffix"

	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/ingest/document"
	"github.com/feedsvc/feedsvc/ingest/platform"
)

var (
	// ErrNoTitle is returned (with whatever else was found) when a page has
	// no recognisable title; such a page is almost never an article worth
	// listing.
	ErrNoTitle = errors.New("no title found")
	// ErrUnparsable is returned when the body cannot be parsed as HTML at
	// all: a property of the page, which fetching it again will not change.
	ErrUnparsable = errors.New("page cannot be parsed")
	// ErrNotHTML is returned for documents that are not HTML (PDFs, images,
	// JSON), which no article can be extracted from.
	ErrNotHTML = errors.New("document is not HTML")
)

// Article is the metadata of one article page.
type Article struct {
	// URL is the canonical URL: <link rel=canonical>, else og:url, resolved
	// against the page URL, else the page URL itself. A canonical URL on
	// another site than the page URL is never taken (see trustedCanonical), so URL
	// always names the site the page was fetched from.
	URL         string
	Title       string
	Description string
	ImageURL    string
	// PublishedAt is in UTC, and zero when the page does not say. A date
	// the page gives without a zone is read in the zone the page declares
	// for its site, else UTC.
	PublishedAt time.Time
	// Source and Platform are a platform post's source block and own ids
	// (see postArticle); nil for a web page, whose block is its URL's.
	Source   *domain.SourceBlock
	Platform *domain.PlatformIDs
	// Language is the language the page declares: <html lang>, else its
	// og:locale or language meta tag, as written (the domain keeps
	// its primary subtag); empty when it declares none.
	Language string
	// Text is the page's running text (body.go); empty for a post and a
	// page that lists articles.
	Text string
}

// Limits of the document fallbacks, chosen so that navigation blurbs and
// icons are not mistaken for the article's lead paragraph and picture.
const (
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

// ParseArticle extracts article metadata from an HTML page, or reads a
// platform post document (postArticle). A page is decoded from
// its charset, at the URL it was fetched from. Each field comes from the
// first source that has it: JSON-LD, then OpenGraph, then other meta tags
// (Dublin Core last), then the document body; except the title, chosen
// among JSON-LD and OpenGraph by agreement with <title> (see page.title),
// and the date, which ranks its sources itself (see page.published).
// Relative URLs are resolved against the page URL (or the page's <base
// href>). A document that is not HTML is ErrNotHTML.
// When no title is found, the partial Article is returned with an error
// wrapping ErrNoTitle.
func ParseArticle(d document.Document) (Article, error) {
	pageURL := d.URL
	base, err := url.Parse(pageURL)
	if err != nil || !base.IsAbs() {
		return Article{}, fmt.Errorf("extract article: invalid page URL %q", pageURL)
	}
	if platform.IsPost(d) {
		return postArticle(d)
	}
	if !d.IsHTML() {
		return Article{}, fmt.Errorf("extract article %s: %w (%s)", pageURL, ErrNotHTML, d.ContentType)
	}
	doc, err := goquery.NewDocumentFromReader(bytes.NewReader(ToUTF8(d.Body, d.ContentType)))
	if err != nil {
		return Article{}, fmt.Errorf("extract article %s: %w: %w", pageURL, ErrUnparsable, err)
	}
	p := &page{doc: doc, base: DocumentBase(doc, base), meta: metaTags(doc)}
	p.ld, _ = jsonLDArticle(JSONLDScripts(doc))

	a := Article{
		URL:         p.canonical(base),
		Title:       p.title(),
		Description: p.description(),
		ImageURL:    p.image(),
		PublishedAt: p.published(),
		Language:    p.language(),
		Text:        p.bodyText(),
	}
	if a.Title == "" {
		return a, fmt.Errorf("extract article %s: %w", pageURL, ErrNoTitle)
	}
	return a, nil
}

// DocumentBase honours <base href>, which changes how every relative URL on
// the page resolves.
func DocumentBase(doc *goquery.Document, page *url.URL) *url.URL {
	href, ok := doc.Find("base[href]").First().Attr("href")
	if !ok {
		return page
	}
	if b := Resolve(page, href); b != "" {
		if u, err := url.Parse(b); err == nil {
			return u
		}
	}
	return page
}

// metaTags maps lower-cased property, name and itemprop keys of <meta>
// elements to their content; the first occurrence wins, as it does for
// crawlers that read og:image. An attribute may hold several
// space-separated names (property="og:title twitter:title", as RDFa
// allows), each a key. Dublin Core's RDFa prefixes (dc:title,
// dcterms:issued) are keyed like its meta names (dc.title).
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
			for key := range strings.FieldsSeq(strings.ToLower(s.AttrOr(attr, ""))) {
				key = dublinCoreKey(key)
				if _, seen := m[key]; !seen {
					m[key] = content
				}
			}
		}
	})
	return m
}

func dublinCoreKey(key string) string {
	for _, prefix := range []string{"dc:", "dcterms:"} {
		if strings.HasPrefix(key, prefix) {
			return strings.Replace(key, ":", ".", 1)
		}
	}
	return key
}

// JSONLDScripts are the contents of the page's JSON-LD script elements.
func JSONLDScripts(doc *goquery.Document) []string {
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
//
// A canonical on another site than the page is ignored too. The article's
// identity is its canonical URL, shared by every organization that crawls
// that URL, and the first page to claim it supplies its title and
// description; trusting any host would let a page on attacker.example
// speak for victim.example.com. The rule lives here rather than in the
// crawler because only here are both the fetched URL and the page's claim
// in hand: callers see Article.URL alone and cannot tell a canonical from
// the fallback. pageURL is the fetched URL (after redirects), not <base
// href>, which the page itself controls.
func (p *page) canonical(pageURL *url.URL) string {
	pageIsRoot := isRootPath(pageURL.Path)
	for _, c := range []string{canonicalLink(p.doc), p.meta["og:url"]} {
		u := Resolve(p.base, c)
		if u == "" {
			continue
		}
		cu, err := url.Parse(u)
		if err != nil || (isRootPath(cu.Path) && !pageIsRoot) || !trustedCanonical(cu, pageURL) {
			continue
		}
		return u
	}
	if u := Resolve(nil, pageURL.String()); u != "" {
		return u
	}
	return pageURL.String()
}

// canonicalLink is the href of the page's <link rel=canonical>, as written.
func canonicalLink(doc *goquery.Document) string {
	var canon string
	doc.Find("link[rel][href]").EachWithBreak(func(_ int, s *goquery.Selection) bool {
		if hasToken(s.AttrOr("rel", ""), "canonical") {
			canon = s.AttrOr("href", "")
			return false
		}
		return true
	})
	return canon
}

// DeclaredURL is the absolute http(s) URL an HTML page says it has (its
// canonical link, else og:url), for a page that came without a URL of its
// own; empty when it declares none. Nothing vouches for the claim, so it
// names the page, never another page's identity.
func DeclaredURL(body []byte, contentType string) string {
	doc, err := goquery.NewDocumentFromReader(bytes.NewReader(ToUTF8(body, contentType)))
	if err != nil {
		return ""
	}
	for _, c := range []string{canonicalLink(doc), metaTags(doc)["og:url"]} {
		u, err := url.Parse(strings.TrimSpace(c))
		if err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" {
			u.Fragment = ""
			return u.String()
		}
	}
	return ""
}

// trustedCanonical reports whether a canonical URL may stand for a page
// fetched from page: both hosts have the same registrable domain (eTLD+1 by the
// public suffix list, whose private section keeps a.github.io apart from
// b.github.io), so m.example.com may point at www.example.com. Ports do not
// matter between named hosts, which one owner controls.
//
// IP addresses and hosts without a registrable domain (localhost, intranet
// names, a bare public suffix) have no owner the list vouches for, so they
// must match exactly, port included: two ports of one address are two
// servers that need not share an owner.
func trustedCanonical(canonical, page *url.URL) bool {
	ch, ph := siteHost(canonical), siteHost(page)
	if ch == "" || ph == "" {
		return false
	}
	if ch == ph && canonical.Port() == page.Port() {
		return true
	}
	cd, ok := registrableDomain(ch)
	if !ok {
		return false
	}
	pd, ok := registrableDomain(ph)
	return ok && cd == pd
}

// siteHost is the host name in the form the public suffix list uses:
// lower case, ASCII (punycode) and without a trailing dot.
func siteHost(u *url.URL) string {
	h := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	if a, err := idna.Lookup.ToASCII(h); err == nil {
		h = a
	}
	return h
}

// registrableDomain is host's eTLD+1; false for IP addresses and for hosts
// that have none.
func registrableDomain(host string) (string, bool) {
	if _, err := netip.ParseAddr(host); err == nil {
		return "", false
	}
	d, err := publicsuffix.EffectiveTLDPlusOne(host)
	if err != nil {
		return "", false
	}
	return d, true
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

// The document fallbacks (documentTitle, lead, firstLargeImage) walk the
// tree, so they run only when the metadata sources came up empty.

// title chooses among the JSON-LD headline and name, og:title and
// twitter:title the one that agrees best with <title> (see
// titleTag.choose); Dublin Core's title only when none of those is given;
// then the document itself.
func (p *page) title() string {
	tag := newTitleTag(p.titleText(), p.siteNames())
	metadata := []string{Clean(p.ld.Headline), Clean(p.ld.Name), Clean(p.meta["og:title"]), Clean(p.meta["twitter:title"])}
	if t := tag.choose(metadata); t != "" {
		return t
	}
	dublinCore := []string{Clean(p.meta["dc.title"]), Clean(p.meta["dcterms.title"])}
	if t := tag.choose(dublinCore); t != "" {
		return t
	}
	if t := p.documentTitle(tag); t != "" {
		return t
	}
	// A page whose every title is its site's name (a home page) still has
	// that title.
	return firstNonEmpty(append(metadata, dublinCore...)...)
}

// language is the language the page declares for itself.
func (p *page) language() string {
	if lang, ok := p.doc.Find("html").First().Attr("lang"); ok && strings.TrimSpace(lang) != "" {
		return Clean(lang)
	}
	return firstNonEmpty(Clean(p.meta["og:locale"]), Clean(p.meta["language"]))
}

func (p *page) titleText() string {
	if len(p.doc.Nodes) == 0 {
		return ""
	}
	t := firstElement(p.doc.Nodes[0], atom.Title)
	if t == nil || t.FirstChild == nil {
		return ""
	}
	return Clean(t.FirstChild.Data)
}

// siteNames are the names the page gives its site.
func (p *page) siteNames() []string {
	return append([]string{p.meta["og:site_name"], p.meta["application-name"]}, p.ld.SiteNames...)
}

// documentTitle prefers the first <h1> that is not the site's name when
// <title> contains it, because <title> usually carries a " | Site name"
// suffix and the h1 is the clean headline; otherwise <title>, without the
// site's name when the page declares it or shows it as an h1.
//
// An h1 equal to the part of <title> after a separator is the site's name
// too, however long (a manual's "Upgrading — Acme Widgets user manual"
// with the manual's name as its h1), and the title is the part before
// it; after a colon only when the h1 is the banner's ("Review: The Bear"
// with the h1 "The Bear" is a review).
func (p *page) documentTitle(tag titleTag) string {
	var h1 string
	core, confirmed := tag.core, false
	p.doc.Find("h1").EachWithBreak(func(_ int, s *goquery.Selection) bool {
		text := Clean(s.Text())
		if text == "" {
			return true
		}
		if tag.isSite(text) {
			confirmed = true
			return true
		}
		if head, ok := tag.beforeSiteName(text, func() bool { return bannerHeading(s) }); ok {
			core, confirmed = head, true
			return true
		}
		h1 = text
		return false
	})
	if h1 != "" && (tag.full == "" || strings.Contains(" "+normTitle(tag.full)+" ", " "+normTitle(h1)+" ")) {
		return h1
	}
	if confirmed {
		return core
	}
	return tag.declaredCore
}

// bannerHeading reports whether an h1 is the site's banner rather than
// the page's heading: it stands in a header, navigation or sidebar, or
// links to the site's home.
func bannerHeading(s *goquery.Selection) bool {
	if s.Closest("header,nav,aside,[role=banner],[role=navigation]").Length() > 0 {
		return true
	}
	home := false
	s.Find("a[href]").EachWithBreak(func(_ int, a *goquery.Selection) bool {
		href := strings.TrimSpace(a.AttrOr("href", ""))
		home = hasToken(a.AttrOr("rel", ""), "home") || href == "/" || strings.HasSuffix(href, "index.html")
		return !home
	})
	return home
}

// description is the first of the JSON-LD description, OpenGraph's,
// Twitter's, the meta description and Dublin Core's; else the lead.
func (p *page) description() string {
	if d := firstNonEmpty(p.ld.Description, p.meta["og:description"], p.meta["twitter:description"],
		p.meta["description"], p.meta["dc.description"], p.meta["dcterms.description"], p.meta["dcterms.abstract"]); d != "" {
		return d
	}
	return p.lead()
}

func (p *page) image() string {
	link, _ := p.doc.Find("link[rel=image_src]").First().Attr("href")
	for _, c := range []string{p.ld.Image, p.meta["og:image"], p.meta["og:image:url"], p.meta["og:image:secure_url"],
		p.meta["twitter:image"], p.meta["twitter:image:src"], link} {
		if u := Resolve(p.base, c); u != "" {
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
		found = Resolve(p.base, src)
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
