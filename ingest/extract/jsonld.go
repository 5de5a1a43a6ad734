package extract

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
)

// articleTypes are the schema.org types treated as an article. Types ending
// in "Article" are accepted too (see isArticleType), so new NewsArticle
// subtypes work without a change here.
var articleTypes = map[string]bool{
	"article":            true,
	"newsarticle":        true,
	"blogposting":        true,
	"liveblogposting":    true,
	"report":             true,
	"socialmediaposting": true,
	// Forums mark each thread's opening post up this way.
	"discussionforumposting": true,
}

// ldArticle holds the fields taken from the JSON-LD article object.
type ldArticle struct {
	// Headline and Name are both kept: some sites put a summary in
	// headline and the title in name, and only the <title> tells which.
	Headline, Name, Description, Image string
	// Published is datePublished; Created (dateCreated) ranks below the
	// page's other explicit publication dates.
	Published, Created string
	// SiteNames are the WebSite's and the publisher's names: an <h1> or a
	// part of <title> equal to one names the site, not the article.
	SiteNames []string
}

// maxLDDepth bounds the walk over JSON-LD values; real documents nest a few
// levels, and the bound keeps hostile input from recursing deeply.
const maxLDDepth = 12

// jsonLDArticle finds the first article-typed object in the given JSON-LD
// script contents (see jsonLDNodes), and resolves {"@id": ...} image
// references against the other nodes of the same documents (as Yoast and
// similar plugins emit).
func jsonLDArticle(scripts []string) (ldArticle, bool) {
	found, ids := JSONLDNodes(scripts, isArticleOrWebSite)
	var a ldArticle
	var obj map[string]any
	for _, n := range found {
		switch {
		case isArticleType(n["@type"]):
			if obj == nil {
				obj = n
			}
		case len(a.SiteNames) == 0:
			a.SiteNames = appendName(a.SiteNames, LDString(n["name"]))
		}
	}
	if obj == nil {
		return a, false
	}
	a.Headline = LDString(obj["headline"])
	a.Name = LDString(obj["name"])
	a.Description = LDString(obj["description"])
	a.Image = LDImage(obj["image"], ids, 0)
	a.Published = LDString(obj["datePublished"])
	a.Created = LDString(obj["dateCreated"])
	if a.Image == "" {
		a.Image = LDImage(obj["thumbnailUrl"], ids, 0)
	}
	a.SiteNames = appendName(a.SiteNames, ldName(obj["publisher"], ids))
	return a, true
}

// ldName reads the name of an object given inline or by an {"@id"}
// reference to another node.
func ldName(v any, ids map[string]map[string]any) string {
	m, ok := v.(map[string]any)
	if !ok {
		return ""
	}
	if n := LDString(m["name"]); n != "" {
		return n
	}
	if id, ok := m["@id"].(string); ok {
		return LDString(ids[id]["name"])
	}
	return ""
}

func appendName(names []string, name string) []string {
	if name = Clean(name); name != "" {
		return append(names, name)
	}
	return names
}

func isArticleOrWebSite(v any) bool {
	if isArticleType(v) {
		return true
	}
	for _, t := range LDTypes(v) {
		if strings.EqualFold(t, "WebSite") {
			return true
		}
	}
	return false
}

// JSONLDNodes decodes the given JSON-LD script contents and returns, in
// document order, every object whose @type is wanted, looking inside
// arrays, @graph and nested values such as a WebPage's mainEntity; and
// every object with an @id, by id, for resolving references. Each kind of
// extractor (articles, events) brings its own wanted. A script that cannot
// be decoded is skipped: one malformed block never hides the others.
func JSONLDNodes(scripts []string, wanted func(ldType any) bool) (found []map[string]any, ids map[string]map[string]any) {
	values := make([]any, 0, len(scripts))
	for _, s := range scripts {
		if v, ok := decodeJSONLD(s); ok {
			values = append(values, v)
		}
	}
	return LDNodes(values, wanted)
}

// LDNodes is JSONLDNodes over values already decoded into the shape
// encoding/json gives (maps, slices, strings, numbers), so that other
// linked-data syntaxes, such as Microdata read into that shape, share the
// walk.
func LDNodes(values []any, wanted func(ldType any) bool) (found []map[string]any, ids map[string]map[string]any) {
	ids = map[string]map[string]any{}
	for _, v := range values {
		walkLD(v, 0, wanted, ids, &found)
	}
	return found, ids
}

// decodeJSONLD decodes one script's content. Sites often wrap it in HTML
// comments or CDATA, or leave raw newlines inside strings (invalid JSON), so
// those are repaired before giving up.
func decodeJSONLD(s string) (any, bool) {
	s = strings.TrimSpace(s)
	for _, w := range []string{"<!--", "-->", "//<![CDATA[", "//]]>", "<![CDATA[", "]]>"} {
		s = strings.ReplaceAll(s, w, "")
	}
	var v any
	if err := json.Unmarshal([]byte(s), &v); err == nil {
		return v, true
	}
	s = strings.NewReplacer("\n", " ", "\r", " ", "\t", " ").Replace(s)
	if err := json.Unmarshal([]byte(s), &v); err == nil {
		return v, true
	}
	return nil, false
}

// walkLD records every object with an @id in ids and every object whose
// @type is wanted in found, in document order.
func walkLD(v any, depth int, wanted func(any) bool, ids map[string]map[string]any, found *[]map[string]any) {
	if depth > maxLDDepth {
		return
	}
	switch t := v.(type) {
	case []any:
		for _, e := range t {
			walkLD(e, depth+1, wanted, ids, found)
		}
	case map[string]any:
		if id, ok := t["@id"].(string); ok && len(t) > 1 {
			if _, seen := ids[id]; !seen {
				ids[id] = t
			}
		}
		if wanted(t["@type"]) {
			*found = append(*found, t)
		}
		// Sorted keys keep the result deterministic: Go randomises map order.
		for _, k := range slices.Sorted(maps.Keys(t)) {
			if k == "@context" {
				continue
			}
			walkLD(t[k], depth+1, wanted, ids, found)
		}
	}
}

// isArticleType reports whether a JSON-LD @type (a string or an array of
// strings, possibly prefixed with the schema.org URL) names an article.
func isArticleType(v any) bool {
	for _, t := range LDTypes(v) {
		t = strings.ToLower(t)
		if articleTypes[t] || strings.HasSuffix(t, "article") {
			return true
		}
	}
	return false
}

// LDTypes are the type names of a JSON-LD @type (a string or an array of
// strings), without a schema.org URL prefix.
func LDTypes(v any) []string {
	var out []string
	switch t := v.(type) {
	case string:
		out = append(out, stripSchema(t))
	case []any:
		for _, e := range t {
			if s, ok := e.(string); ok {
				out = append(out, stripSchema(s))
			}
		}
	}
	return out
}

func stripSchema(t string) string {
	t = strings.TrimSpace(t)
	if i := strings.LastIndexAny(t, "/:"); i >= 0 {
		return t[i+1:]
	}
	return t
}

// LDString reads a text value that may be a string, an array of strings or a
// {"@value": ...} object.
func LDString(v any) string {
	switch t := v.(type) {
	case string:
		return t
	case []any:
		for _, e := range t {
			if s := LDString(e); s != "" {
				return s
			}
		}
	case map[string]any:
		return LDString(t["@value"])
	}
	return ""
}

// LDImage reads an image given as a URL string, an ImageObject ({url} or
// {contentUrl}), an {"@id"} reference to another node, or an array of those.
func LDImage(v any, ids map[string]map[string]any, depth int) string {
	if depth > 3 {
		return ""
	}
	switch t := v.(type) {
	case string:
		return t
	case []any:
		for _, e := range t {
			if s := LDImage(e, ids, depth+1); s != "" {
				return s
			}
		}
	case map[string]any:
		if s := firstNonEmpty(LDString(t["url"]), LDString(t["contentUrl"])); s != "" {
			return s
		}
		if id, ok := t["@id"].(string); ok {
			if ref, ok := ids[id]; ok {
				return LDImage(ref, ids, depth+1)
			}
		}
	}
	return ""
}
