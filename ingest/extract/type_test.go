package extract

import (
	"bytes"
	"strings"

	"github.com/PuerkitoBio/goquery"
)

// articleType is the type of the article a page describes: the most
// specific JSON-LD @type of the article object ParseArticle reads (e.g.
// NewsArticle), else og:type verbatim (e.g. "article"), else empty.
// Production has no use for it; the tests use it to check that the right
// JSON-LD object was picked.
func articleType(body []byte) string {
	doc, err := goquery.NewDocumentFromReader(bytes.NewReader(ToUTF8(body, "")))
	if err != nil {
		return ""
	}
	found, _ := JSONLDNodes(JSONLDScripts(doc), isArticleType)
	if len(found) > 0 {
		if t := ldTypeName(found[0]["@type"]); t != "" {
			return t
		}
	}
	return metaTags(doc)["og:type"]
}

// ldTypeName returns the most specific article type name, e.g. NewsArticle
// for ["Article", "NewsArticle"].
func ldTypeName(v any) string {
	best := ""
	for _, t := range LDTypes(v) {
		l := strings.ToLower(t)
		if !articleTypes[l] && !strings.HasSuffix(l, "article") {
			continue
		}
		if best == "" || l != "article" {
			best = t
		}
	}
	return best
}
