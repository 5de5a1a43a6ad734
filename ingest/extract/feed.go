package extract

import (
	"bytes"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/mmcdole/gofeed"
	ext "github.com/mmcdole/gofeed/extensions"
	"golang.org/x/net/html"
)

// maxFeedDescriptionRunes bounds descriptions: full-text feeds put whole
// articles in <description>, which a candidate list does not need.
const maxFeedDescriptionRunes = 500

// FeedEntry is one item of an RSS, Atom or JSON feed.
type FeedEntry struct {
	URL         string
	Title       string
	Description string
	ImageURL    string
	// PublishedAt is the published date, else the updated date, in UTC; zero
	// when the feed gives neither.
	PublishedAt time.Time
}

// Feed parses an RSS, Atom or JSON feed. Relative item links are resolved
// against the feed's own site link when that is absolute; callers that know
// the feed's URL should resolve what remains relative against it. Items
// without a usable link are skipped, since they cannot become candidates.
func Feed(body []byte) ([]FeedEntry, error) {
	f, err := gofeed.NewParser().Parse(bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("parse feed: %w", err)
	}
	base, _ := url.Parse(f.Link)
	if base != nil && !base.IsAbs() {
		base = nil
	}
	out := make([]FeedEntry, 0, len(f.Items))
	for _, it := range f.Items {
		if it == nil {
			continue
		}
		link := itemLink(it, base)
		if link == "" {
			continue
		}
		out = append(out, FeedEntry{
			URL:         link,
			Title:       Clean(StripTags(it.Title)),
			Description: clip(StripTags(firstNonEmpty(it.Description, it.Content)), maxFeedDescriptionRunes),
			ImageURL:    itemImage(it, base),
			PublishedAt: itemDate(it),
		})
	}
	return out, nil
}

// itemLink takes the item's link, else its first link, else a GUID that is
// a URL (RSS permalinks). A relative link stays relative when the feed gives
// no absolute base, so that the caller can resolve it against the feed URL.
func itemLink(it *gofeed.Item, base *url.URL) string {
	for _, c := range append(append([]string{it.Link}, it.Links...), it.GUID) {
		if abs := Resolve(base, c); abs != "" {
			return abs
		}
	}
	if base == nil {
		return feedURL(nil, it.Link)
	}
	return ""
}

// feedURL resolves ref like resolve, but when the feed has no absolute base
// it keeps a relative reference for the caller, who knows the feed's URL.
func feedURL(base *url.URL, ref string) string {
	if abs := Resolve(base, ref); abs != "" {
		return abs
	}
	ref = strings.TrimSpace(ref)
	if base == nil && ref != "" && !strings.Contains(ref, ":") {
		return ref
	}
	return ""
}

func itemDate(it *gofeed.Item) time.Time {
	for _, t := range []*time.Time{it.PublishedParsed, it.UpdatedParsed} {
		if t != nil && !t.IsZero() {
			return plausible(*t)
		}
	}
	return firstDate(it.Published, it.Updated)
}

func firstDate(values ...string) time.Time {
	for _, v := range values {
		if t := ParseDate(v); !t.IsZero() {
			return t
		}
	}
	return time.Time{}
}

// itemImage looks at the item image, image enclosures, Media RSS content and
// thumbnails, and finally the first <img> of the item's HTML.
func itemImage(it *gofeed.Item, base *url.URL) string {
	if it.Image != nil {
		if u := feedURL(base, it.Image.URL); u != "" {
			return u
		}
	}
	for _, e := range it.Enclosures {
		if e != nil && strings.HasPrefix(strings.ToLower(e.Type), "image/") {
			if u := feedURL(base, e.URL); u != "" {
				return u
			}
		}
	}
	if u := mediaImage(it, base); u != "" {
		return u
	}
	for _, h := range []string{it.Content, it.Description} {
		if u := feedURL(base, firstImgSrc(h)); u != "" {
			return u
		}
	}
	return ""
}

func mediaImage(it *gofeed.Item, base *url.URL) string {
	media := it.Extensions["media"]
	if media == nil {
		return ""
	}
	for _, name := range []string{"content", "thumbnail", "group"} {
		for _, e := range media[name] {
			if u := mediaExtensionURL(e.Attrs, e.Children, base); u != "" {
				return u
			}
		}
	}
	return ""
}

func mediaExtensionURL(attrs map[string]string, children map[string][]ext.Extension, base *url.URL) string {
	medium, typ := strings.ToLower(attrs["medium"]), strings.ToLower(attrs["type"])
	isImage := medium == "image" || strings.HasPrefix(typ, "image/") || (medium == "" && typ == "")
	if isImage {
		if u := feedURL(base, attrs["url"]); u != "" {
			return u
		}
	}
	for _, name := range []string{"content", "thumbnail"} {
		for _, c := range children[name] {
			if u := mediaExtensionURL(c.Attrs, nil, base); u != "" {
				return u
			}
		}
	}
	return ""
}

// firstImgSrc returns the src of the first <img> in an HTML fragment.
func firstImgSrc(fragment string) string {
	if !strings.Contains(fragment, "<img") {
		return ""
	}
	z := html.NewTokenizer(strings.NewReader(fragment))
	for {
		switch z.Next() {
		case html.ErrorToken:
			return ""
		case html.StartTagToken, html.SelfClosingTagToken:
			t := z.Token()
			if t.Data != "img" {
				continue
			}
			for _, a := range t.Attr {
				if a.Key == "src" {
					return a.Val
				}
			}
		}
	}
}

// blockTags end a line of text, so that "<p>a</p><p>b</p>" strips to "a b"
// rather than "ab".
var blockTags = map[string]bool{
	"p": true, "br": true, "div": true, "li": true, "h1": true, "h2": true, "h3": true,
	"h4": true, "h5": true, "h6": true, "tr": true, "td": true, "blockquote": true, "figcaption": true,
}

// StripTags turns an HTML fragment into plain text: tags are removed (with a
// space for block elements), script and style content is dropped, entities
// are decoded and whitespace is collapsed.
func StripTags(fragment string) string {
	if !strings.ContainsAny(fragment, "<&") {
		return Clean(fragment)
	}
	var b strings.Builder
	z := html.NewTokenizer(strings.NewReader(fragment))
	skip := 0
	for {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			return Clean(b.String())
		case html.TextToken:
			if skip == 0 {
				b.Write(z.Text())
			}
		case html.StartTagToken, html.EndTagToken, html.SelfClosingTagToken:
			name, _ := z.TagName()
			tag := string(name)
			if tag == "script" || tag == "style" {
				skip = skipDepth(skip, tt)
			}
			if blockTags[tag] {
				b.WriteByte(' ')
			}
		}
	}
}

func skipDepth(skip int, tt html.TokenType) int {
	switch tt {
	case html.StartTagToken:
		return skip + 1
	case html.EndTagToken:
		if skip > 0 {
			return skip - 1
		}
	}
	return skip
}
