package extract

import (
	"bytes"
	"net/url"
	"path"
	"regexp"
	"strings"

	"github.com/PuerkitoBio/goquery"
)

// Links returns the absolute http(s) links of a page, resolved against the
// page URL (or its <base href>), without fragments, deduplicated, in
// document order. Unparseable pages yield nil: a listing that finds nothing
// is the right outcome for garbage.
func Links(pageURL string, body []byte) []string {
	doc, base, ok := parsePage(pageURL, body)
	if !ok {
		return nil
	}
	var out []string
	seen := map[string]bool{}
	doc.Find("a[href], area[href]").Each(func(_ int, s *goquery.Selection) {
		href := strings.TrimSpace(s.AttrOr("href", ""))
		if strings.HasPrefix(href, "#") {
			return // a jump within this page, not a link to another document
		}
		u := Resolve(base, href)
		if u != "" && !seen[u] {
			seen[u] = true
			out = append(out, u)
		}
	})
	return out
}

// feedTypes are the <link type> values that announce a feed gofeed can read.
var feedTypes = map[string]bool{
	"application/rss+xml":   true,
	"application/atom+xml":  true,
	"application/feed+json": true,
}

// FeedLinks returns the feeds a page announces with <link rel="alternate"
// type="application/rss+xml|application/atom+xml|application/feed+json">,
// absolute and deduplicated. WordPress comment feeds are left out: they list
// comments, not articles.
func FeedLinks(pageURL string, body []byte) []string {
	doc, base, ok := parsePage(pageURL, body)
	if !ok {
		return nil
	}
	var out []string
	seen := map[string]bool{}
	doc.Find("link[href][type]").Each(func(_ int, s *goquery.Selection) {
		typ := strings.ToLower(strings.TrimSpace(strings.SplitN(s.AttrOr("type", ""), ";", 2)[0]))
		if !feedTypes[typ] || !hasToken(s.AttrOr("rel", ""), "alternate") {
			return
		}
		u := Resolve(base, s.AttrOr("href", ""))
		if u == "" || seen[u] || isCommentFeed(u) {
			return
		}
		seen[u] = true
		out = append(out, u)
	})
	return out
}

func isCommentFeed(u string) bool {
	l := strings.ToLower(strings.TrimSuffix(u, "/"))
	return strings.HasSuffix(l, "/comments/feed") || strings.Contains(l, "/comments/feed?")
}

func parsePage(pageURL string, body []byte) (*goquery.Document, *url.URL, bool) {
	page, err := url.Parse(pageURL)
	if err != nil || !page.IsAbs() {
		return nil, nil, false
	}
	doc, err := goquery.NewDocumentFromReader(bytes.NewReader(ToUTF8(body, "")))
	if err != nil {
		return nil, nil, false
	}
	return doc, DocumentBase(doc, page), true
}

// nonArticleSegments are path segments that mark listing, account or
// utility pages rather than articles.
var nonArticleSegments = map[string]bool{
	"tag": true, "tags": true, "category": true, "categories": true, "topic": true, "topics": true,
	"author": true, "authors": true, "page": true, "login": true, "logout": true, "signin": true,
	"sign-in": true, "signup": true, "sign-up": true, "register": true, "account": true,
	"search": true, "subscribe": true, "subscription": true, "subscriptions": true, "newsletter": true,
	"newsletters": true, "feed": true, "feeds": true, "rss": true, "wp-admin": true, "wp-login.php": true,
	"wp-json": true, "cart": true, "checkout": true, "privacy": true, "privacy-policy": true,
	"terms": true, "terms-of-service": true, "terms-of-use": true, "contact": true, "contact-us": true,
	"about": true, "about-us": true, "cookies": true, "cookie-policy": true,
	"profile": true, "user": true, "users": true, "comments": true, "share": true,
	"sitemap": true, "cdn-cgi": true,
}

// assetExtensions are file types that are never article pages.
var assetExtensions = map[string]bool{
	".jpg": true, ".jpeg": true, ".png": true, ".gif": true, ".webp": true, ".svg": true, ".ico": true,
	".avif": true, ".css": true, ".js": true, ".json": true, ".xml": true, ".rss": true, ".pdf": true,
	".zip": true, ".gz": true, ".mp3": true, ".mp4": true, ".m4a": true, ".mov": true, ".avi": true,
	".webm": true, ".woff": true, ".woff2": true, ".ttf": true, ".eot": true, ".txt": true,
	".doc": true, ".docx": true, ".xls": true, ".xlsx": true, ".ppt": true, ".pptx": true, ".csv": true,
}

// pageExtensions are stripped before judging the last segment, so that
// "/news/story-title.html" reads like "/news/story-title".
var pageExtensions = []string{".html", ".htm", ".shtml", ".php", ".asp", ".aspx", ".jsp"}

// nonArticleQuery are query parameters of search, paging and reply links.
var nonArticleQuery = []string{"s", "q", "page", "replytocom", "share", "output"}

var (
	longNumber = regexp.MustCompile(`\d{5,}`)
	yearMonth  = regexp.MustCompile(`/(19|20)\d\d/(0?[1-9]|1[0-2])(/|$)`)
	dateLike   = regexp.MustCompile(`^(19|20)\d\d$|^(0?[1-9]|[12]\d|3[01])$`)
)

// LikelyArticle is the heuristic that picks article links out of an index
// page. A link is accepted when all of these hold:
//
//   - it is http(s) on the page's host, ignoring a "www." prefix and case;
//   - it is neither the page itself nor the site root;
//   - its path has no listing or utility segment (tag, category, author,
//     page, login, search, feed, about, ...; see nonArticleSegments), no
//     asset extension (.jpg, .css, .js, .pdf, ...) and no search, paging or
//     reply query parameter;
//   - it looks like an article: the last segment is a slug of at least
//     three words ("big-storm-hits-coast"), contains a number of five or
//     more digits (an article id), is all digits of three or more ("/news/123"),
//     follows a /yyyy/mm/ date in the path, or is a named page such as
//     "story.html" below the root.
//
// Section fronts ("/world", "/world/europe") and date archives ("/2024/05/")
// fail the last rule, which is the point: they are index pages themselves.
func LikelyArticle(pageURL, link string) bool {
	p, err := url.Parse(pageURL)
	if err != nil {
		return false
	}
	u, err := url.Parse(strings.TrimSpace(link))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return false
	}
	if !sameSite(p, u) || samePage(p, u) {
		return false
	}
	if hasNonArticleQuery(u.Query()) {
		return false
	}
	return articlePath(u.Path)
}

func sameSite(a, b *url.URL) bool {
	ha := strings.TrimPrefix(strings.ToLower(a.Hostname()), "www.")
	hb := strings.TrimPrefix(strings.ToLower(b.Hostname()), "www.")
	return ha != "" && ha == hb && a.Port() == b.Port()
}

func samePage(a, b *url.URL) bool {
	return strings.TrimSuffix(a.Path, "/") == strings.TrimSuffix(b.Path, "/") && a.RawQuery == b.RawQuery
}

func hasNonArticleQuery(q url.Values) bool {
	for _, k := range nonArticleQuery {
		if q.Has(k) {
			return true
		}
	}
	return false
}

// articlePath applies the path rules of LikelyArticle.
func articlePath(p string) bool {
	segs := splitPath(p)
	if len(segs) == 0 {
		return false
	}
	for _, s := range segs {
		if nonArticleSegments[strings.ToLower(s)] {
			return false
		}
	}
	last := strings.ToLower(segs[len(segs)-1])
	ext := path.Ext(last)
	if assetExtensions[ext] {
		return false
	}
	named := false
	for _, pe := range pageExtensions {
		if ext == pe {
			last, named = strings.TrimSuffix(last, pe), true
			break
		}
	}
	if last == "index" || last == "default" || last == "" {
		return false
	}
	return looksLikeArticleSegment(last, p, named, len(segs))
}

func looksLikeArticleSegment(last, fullPath string, named bool, depth int) bool {
	switch {
	case slugWords(last) >= 3:
		return true
	case longNumber.MatchString(last):
		return true
	case isDigits(last) && len(last) >= 3 && !dateLike.MatchString(last) && depth >= 2:
		return true
	case yearMonth.MatchString(fullPath) && !dateLike.MatchString(last) && !isDigits(last):
		return true
	case named && depth >= 2:
		return true
	}
	return false
}

func splitPath(p string) []string {
	var out []string
	for _, s := range strings.Split(p, "/") {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

// slugWords counts the alphabetic words of a hyphen- or underscore-separated
// slug; "2024-05-storm" has one word, "big-storm-hits" three.
func slugWords(s string) int {
	n := 0
	for _, w := range strings.FieldsFunc(s, func(r rune) bool { return r == '-' || r == '_' || r == '+' || r == '.' }) {
		if !isDigits(w) && w != "" {
			n++
		}
	}
	return n
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}
