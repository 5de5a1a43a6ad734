package extract

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// The lead is the article's opening text, the description of last resort.
// A reader finds it by looking past what is not the article (navigation,
// headings, captions, code, hidden text) for the first block of visible
// text shaped like prose, whatever element holds it: a <p>, or a <div> or
// <section> holding text of its own (forum posts, older CMSes).

// minLeadWords is the fewest words a lead may have; shorter text is a
// label, a caption or a date, whatever its punctuation.
const minLeadWords = 5

// proseWords is the length from which a text counts as prose even when it
// neither starts with a capital nor ends a sentence (a forum post typed in
// lower case, a paragraph cut by an ad slot).
const proseWords = 12

// maxLinkShare is the largest share of a lead's text that may be link
// text; more is a list of links, not prose.
const maxLinkShare = 0.5

// leadScopes are where the lead is looked for, in turn: the article, the
// main content, then the whole page.
var leadScopes = []atom.Atom{atom.Article, atom.Main, atom.Body}

// lead is the first lead-shaped block of the first scope that has one. A
// page that lists several articles (a weekly edition's front page, a
// section page) is described by its own text beside them, never by the
// first story's: its <article> elements are passed over.
func (p *page) lead() string {
	listing := listsArticles(p.doc.Find("article").Nodes)
	for _, scope := range leadScopes {
		if scope == atom.Article && listing {
			continue
		}
		for _, root := range p.doc.Find(scope.String()).Nodes {
			if excluded(root) || excludedAncestor(root) {
				continue
			}
			if text := findLead(root, listing); text != "" {
				return clip(text, maxParagraphRunes)
			}
		}
	}
	return ""
}

// listsArticles reports whether a page's <article> elements are several
// stories: at least two, outside one another and page furniture, each
// with a heading of its own (comments, also <article>s, have none).
func listsArticles(articles []*html.Node) bool {
	stories := 0
	for _, a := range articles {
		if excluded(a) || excludedAncestor(a) || insideArticle(a) || !hasHeading(a) {
			continue
		}
		if stories++; stories == 2 {
			return true
		}
	}
	return false
}

func insideArticle(n *html.Node) bool {
	for a := n.Parent; a != nil; a = a.Parent {
		if a.DataAtom == atom.Article {
			return true
		}
	}
	return false
}

func hasHeading(n *html.Node) bool {
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type != html.ElementNode {
			continue
		}
		if c.DataAtom == atom.H1 || c.DataAtom == atom.H2 || c.DataAtom == atom.H3 || hasHeading(c) {
			return true
		}
	}
	return false
}

// findLead judges n's own text, then looks in its child blocks in order;
// past <article> elements when skipArticles.
func findLead(n *html.Node, skipArticles bool) string {
	if judgedBlock[n.DataAtom] {
		if text, ok := blockText(n); ok {
			return text
		}
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type != html.ElementNode || inline[c.DataAtom] || excluded(c) || skipArticles && c.DataAtom == atom.Article {
			continue
		}
		if text := findLead(c, skipArticles); text != "" {
			return text
		}
	}
	return ""
}

// blockText is the visible text a block holds itself (text and inline
// elements, not nested blocks), when it is shaped like a lead.
func blockText(n *html.Node) (string, bool) {
	var t inlineText
	t.collect(n, false)
	text := Clean(t.b.String())
	if text == "" || float64(t.linkRunes) > maxLinkShare*float64(utf8.RuneCountInString(text)) {
		return "", false
	}
	return text, sentenceShaped(text) && !continues(text, t.holes)
}

// inlineText gathers the visible inline text of a block.
type inlineText struct {
	b         strings.Builder
	linkRunes int
	// holes counts the formulas and images the text flows around, which
	// it loses.
	holes int
}

func (t *inlineText) collect(n *html.Node, inLink bool) {
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		switch {
		case c.Type == html.TextNode:
			t.b.WriteString(c.Data)
			if inLink {
				t.linkRunes += utf8.RuneCountInString(strings.TrimSpace(c.Data))
			}
		case c.Type != html.ElementNode:
		case c.DataAtom == atom.Br:
			t.b.WriteByte(' ')
		case inline[c.DataAtom] && !excluded(c) && !isCitationMark(c):
			t.collect(c, inLink || c.DataAtom == atom.A)
		case holdsMedia(c):
			t.holes++
		}
	}
}

// media are the elements a text may flow around that leave a hole in it
// when only the text is read: formulas and pictures.
var media = map[atom.Atom]bool{
	atom.Math: true, atom.Img: true, atom.Svg: true, atom.Picture: true, atom.Object: true,
	atom.Embed: true, atom.Canvas: true,
}

// holdsMedia reports whether an element left out of a block's text is or
// holds a formula or picture (MediaWiki wraps each formula in spans, one
// of them hidden).
func holdsMedia(n *html.Node) bool {
	if media[n.DataAtom] {
		return true
	}
	if notText[n.DataAtom] {
		return false
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type == html.ElementNode && holdsMedia(c) {
			return true
		}
	}
	return false
}

// connectives are words that continue a sentence begun before them: a
// text opening with one in lower case starts mid-sentence.
var connectives = map[string]bool{
	"where": true, "wherein": true, "whereby": true, "whereas": true, "which": true, "and": true,
	"or": true, "but": true, "nor": true, "then": true, "thus": true, "hence": true, "therefore": true,
	"while": true, "whilst": true, "with": true, "that": true, "i.e.": true, "e.g.": true,
	"respectively": true, "because": true, "although": true, "giving": true, "yielding": true,
	"is": true, "are": true, "was": true, "were": true, "gives": true, "equals": true,
}

// continues reports whether a text starts mid-sentence: in lower case,
// with a connective ("where m is the mass…"), or around holes where
// formulas or pictures stood (a paragraph that opens with a formula reads
// "gives the share…" without it). A reader does not take it for the
// opening of an article.
func continues(text string, holes int) bool {
	first, _ := utf8.DecodeRuneInString(text)
	if !unicode.IsLower(first) {
		return false
	}
	word, _, _ := strings.Cut(text, " ")
	return holes > 0 || connectives[strings.TrimRight(word, ",;:")]
}

// sentenceShaped reports whether text reads like the opening of an
// article: enough words, starting like a sentence and ending like one;
// or long enough to be prose anyway.
func sentenceShaped(text string) bool {
	words := len(strings.Fields(text))
	if words >= proseWords {
		return true
	}
	if words < minLeadWords && !(hasIdeographs(text) && utf8.RuneCountInString(text) >= 4*minLeadWords) {
		return false
	}
	first, _ := utf8.DecodeRuneInString(text)
	startsSentence := unicode.IsUpper(first) || unicode.IsDigit(first) || strings.ContainsRune(`"'“‘„«¿¡(`, first) ||
		unicode.IsLetter(first) && !unicode.IsLower(first) // scripts without case
	last, _ := utf8.DecodeLastRuneInString(strings.TrimRight(text, `"'”’»)]`))
	return startsSentence && strings.ContainsRune(".!?…。！？", last)
}

func hasIdeographs(s string) bool {
	for _, r := range s {
		if unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana) {
			return true
		}
	}
	return false
}

// isCitationMark reports a footnote mark such as Wikipedia's "[12]", which
// a reader skips.
func isCitationMark(n *html.Node) bool {
	if n.DataAtom != atom.Sup {
		return false
	}
	var b strings.Builder
	collectText(n, &b)
	s := strings.TrimSpace(b.String())
	return len(s) <= 16 && strings.HasPrefix(s, "[") && strings.HasSuffix(s, "]")
}

func collectText(n *html.Node, b *strings.Builder) {
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type == html.TextNode {
			b.WriteString(c.Data)
		} else if c.Type == html.ElementNode {
			collectText(c, b)
		}
	}
}

// judgedBlock are the elements whose own text may be the lead.
var judgedBlock = map[atom.Atom]bool{
	atom.P: true, atom.Div: true, atom.Section: true, atom.Article: true, atom.Main: true,
}

// inline are the elements that are part of the text of the block holding
// them.
var inline = map[atom.Atom]bool{
	atom.A: true, atom.Abbr: true, atom.B: true, atom.Bdi: true, atom.Bdo: true, atom.Cite: true,
	atom.Code: true, atom.Data: true, atom.Del: true, atom.Dfn: true, atom.Em: true, atom.Font: true,
	atom.I: true, atom.Ins: true, atom.Kbd: true, atom.Mark: true, atom.Q: true, atom.S: true,
	atom.Samp: true, atom.Small: true, atom.Span: true, atom.Strong: true, atom.Sub: true, atom.Sup: true,
	atom.Time: true, atom.U: true, atom.Var: true, atom.Wbr: true,
}

// notText are elements whose content is never the article's prose: code
// and markup that browsers do not render as text, page furniture, and
// headings, captions and forms.
var notText = map[atom.Atom]bool{
	atom.Script: true, atom.Style: true, atom.Noscript: true, atom.Template: true, atom.Svg: true,
	atom.Math: true, atom.Iframe: true, atom.Object: true, atom.Head: true, atom.Title: true,
	atom.Nav: true, atom.Header: true, atom.Footer: true, atom.Aside: true, atom.Figure: true,
	atom.Figcaption: true, atom.Form: true, atom.Button: true, atom.Select: true, atom.Textarea: true,
	atom.Dialog: true, atom.H1: true, atom.H2: true, atom.H3: true, atom.H4: true, atom.H5: true, atom.H6: true,
}

// furnitureRoles are ARIA roles of page parts that are not the article.
var furnitureRoles = map[string]bool{
	"navigation": true, "banner": true, "contentinfo": true, "complementary": true, "search": true,
	"note": true, "dialog": true, "alertdialog": true, "alert": true, "menu": true, "menubar": true,
	"toolbar": true, "tablist": true,
}

// furnitureClasses are class or id fragments that CMSes give to text
// beside the article: captions, bylines, banners.
var furnitureClasses = []string{"caption", "byline", "breadcrumb", "cookie", "newsletter"}

// excluded reports whether an element and all it holds are not article
// text: not text at all, page furniture, or hidden from readers.
func excluded(n *html.Node) bool {
	if notText[n.DataAtom] {
		return true
	}
	for _, a := range n.Attr {
		if a.Namespace != "" {
			continue
		}
		switch a.Key {
		case "hidden":
			return true
		case "aria-hidden":
			if strings.EqualFold(strings.TrimSpace(a.Val), "true") {
				return true
			}
		case "style":
			if hiddenByStyle(a.Val) {
				return true
			}
		case "role":
			if furnitureRoles[strings.ToLower(strings.TrimSpace(a.Val))] {
				return true
			}
		case "class", "id":
			if hasFurnitureClass(a.Val) {
				return true
			}
		}
	}
	return false
}

func excludedAncestor(n *html.Node) bool {
	for a := n.Parent; a != nil; a = a.Parent {
		if a.Type == html.ElementNode && excluded(a) {
			return true
		}
	}
	return false
}

// hiddenByStyle reads an inline style for display:none or
// visibility:hidden, however it is spaced or cased.
func hiddenByStyle(style string) bool {
	s := strings.ToLower(strings.Join(strings.Fields(style), ""))
	return strings.Contains(s, "display:none") || strings.Contains(s, "visibility:hidden")
}

// hasFurnitureClass matches whole parts of class names (wp-caption-text,
// Article_byline__c7), so that a container named has-captions is not
// taken for a caption.
func hasFurnitureClass(v string) bool {
	for part := range strings.FieldsFuncSeq(strings.ToLower(v), func(r rune) bool {
		return r == ' ' || r == '-' || r == '_' || r == '\t' || r == '\n'
	}) {
		if slices.Contains(furnitureClasses, part) {
			return true
		}
	}
	return false
}
