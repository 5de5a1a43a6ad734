package extract

import (
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// The body is the article's running text, which copies of one story share
// (domain/nearcopy compares it). It is the text of every block in the
// first scope that has any (the article, the main content, the page),
// past what is not the article (navigation, captions, hidden text, the
// furniture lead.go knows) and blocks mostly made of links (a related
// stories list). A page that lists several articles has no body.

// maxBodyRunes bounds the text a signature is computed from: a copy is
// known by its first few thousand words.
const maxBodyRunes = 20000

// bodyText is the page's running text, blocks separated by newlines.
func (p *page) bodyText() string {
	articles := p.doc.Find("article").Nodes
	if listsArticles(articles) {
		return ""
	}
	for _, scope := range leadScopes {
		var b strings.Builder
		for _, root := range p.doc.Find(scope.String()).Nodes {
			if excluded(root) || excludedAncestor(root) {
				continue
			}
			collectBody(root, &b)
			if b.Len() > 0 {
				break
			}
		}
		if b.Len() > 0 {
			return clip(b.String(), maxBodyRunes)
		}
	}
	return ""
}

// collectBody appends the text of the blocks under n.
func collectBody(n *html.Node, b *strings.Builder) {
	if b.Len() >= 4*maxBodyRunes {
		return
	}
	if judgedBlock[n.DataAtom] || n.DataAtom == atom.Li || n.DataAtom == atom.Blockquote {
		var t inlineText
		t.collect(n, false)
		if text := Clean(t.b.String()); text != "" && float64(t.linkRunes) <= maxLinkShare*float64(len([]rune(text))) {
			b.WriteString(text)
			b.WriteByte('\n')
		}
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type != html.ElementNode || inline[c.DataAtom] || excluded(c) {
			continue
		}
		collectBody(c, b)
	}
}
