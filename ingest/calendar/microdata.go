package calendar

import (
	"strings"

	"golang.org/x/net/html"
)

// maxMicrodataDepth bounds nested items, as the JSON-LD walk is bounded.
const maxMicrodataDepth = 12

// microdata reads a page's top-level Microdata items into the shape
// JSON-LD decodes to (maps with @type, values as strings, nested items as
// maps), so one walk and one schema.org reader serve both syntaxes.
func microdata(root *html.Node) []any {
	var items []any
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode && hasAttr(n, "itemscope") && !hasAttr(n, "itemprop") {
			items = append(items, readItem(n, 0))
			return
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(root)
	return items
}

// readItem reads the properties of one item: the itemprop elements below
// it that no nested item claims first.
func readItem(n *html.Node, depth int) map[string]any {
	item := map[string]any{}
	if t := attr(n, "itemtype"); t != "" {
		types := make([]any, 0, 1)
		for _, f := range strings.Fields(t) {
			types = append(types, f)
		}
		item["@type"] = types
	}
	if id := attr(n, "itemid"); id != "" {
		item["@id"] = id
	}
	var props func(p *html.Node)
	props = func(p *html.Node) {
		for c := p.FirstChild; c != nil; c = c.NextSibling {
			if c.Type != html.ElementNode {
				continue
			}
			names := strings.Fields(attr(c, "itemprop"))
			nested := hasAttr(c, "itemscope")
			if len(names) > 0 {
				var v any
				if nested && depth < maxMicrodataDepth {
					v = readItem(c, depth+1)
				} else {
					v = itemValue(c)
				}
				for _, name := range names {
					addProp(item, name, v)
				}
			}
			if !nested {
				props(c)
			}
		}
	}
	props(n)
	return item
}

func addProp(item map[string]any, name string, v any) {
	switch old := item[name].(type) {
	case nil:
		item[name] = v
	case []any:
		item[name] = append(old, v)
	default:
		item[name] = []any{old, v}
	}
}

// itemValue is an element's Microdata value by its kind: content of meta,
// URLs of links and media, machine values of time and data, else text.
func itemValue(n *html.Node) string {
	switch n.Data {
	case "meta":
		return attr(n, "content")
	case "a", "area", "link":
		return attr(n, "href")
	case "img", "audio", "video", "source", "iframe", "embed", "track":
		return attr(n, "src")
	case "object":
		return attr(n, "data")
	case "data", "meter":
		return attr(n, "value")
	case "time":
		if hasAttr(n, "datetime") {
			return attr(n, "datetime")
		}
	}
	if c := attr(n, "content"); c != "" {
		return c
	}
	var b strings.Builder
	var text func(*html.Node)
	text = func(t *html.Node) {
		if t.Type == html.TextNode {
			b.WriteString(t.Data)
		}
		for c := t.FirstChild; c != nil; c = c.NextSibling {
			text(c)
		}
	}
	text(n)
	return strings.TrimSpace(b.String())
}

func hasAttr(n *html.Node, key string) bool {
	for _, a := range n.Attr {
		if a.Key == key {
			return true
		}
	}
	return false
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return strings.TrimSpace(a.Val)
		}
	}
	return ""
}
