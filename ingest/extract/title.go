package extract

import (
	"slices"
	"strings"
	"unicode"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// titleSeparators split a <title> into the article's title and the site's
// name ("Storm hits coast | Example News", "New Zealand - Wikipedia").
var titleSeparators = []string{" | ", " - ", " – ", " — ", " · ", " • ", " :: ", " » "}

// maxSiteNameWords bounds how long an undeclared title suffix may be and
// still be taken for the site's name; a longer one is part of the title
// ("Brexit - what happens next week in Parliament").
const maxSiteNameWords = 4

// titleAgreement ranks how well a title candidate agrees with <title>.
type titleAgreement int

const (
	agreesNot     titleAgreement = iota
	agreesInWords                // shares most of its words with <title> minus the site name
	agreesWithTag                // is <title> itself, site name and all
	agreesExactly                // is <title> minus the site name
)

// minTitleDice is the word overlap (Dice coefficient) from which a
// candidate counts as a variant of <title> (a rewritten SEO title) rather
// than another text (a summary, a kicker, a placeholder).
const minTitleDice = 2.0 / 3

// titleTag is the <title> split into the article's part and the site's
// name, and the names the page gives its site.
type titleTag struct {
	full string
	// declaredCore is full without a site name the page declares; core is
	// full without the site's name, declared or guessed.
	declaredCore, core string
	declared           []string // normalised
	// guessed is a short last part of <title> taken for the site's name
	// (normalised). It ranks candidates and rejects h1s equal to it, but
	// is cut from a title only when the page confirms it, since
	// "Review: The Bear - season 3" ends in a short part too.
	guessed string
}

// newTitleTag splits a <title> by the site names the page declares, or
// else by a guess: a last part short and shorter than what it follows.
func newTitleTag(full string, declared []string) titleTag {
	t := titleTag{full: full, declaredCore: full, core: full}
	for _, d := range declared {
		if n := normTitle(d); n != "" {
			t.declared = append(t.declared, n)
		}
	}
	if core, ok := t.stripDeclared(full); ok {
		t.declaredCore, t.core = core, core
		return t
	}
	head, tail, ok := splitLast(full)
	if !ok {
		return t
	}
	tw, hw := len(strings.Fields(normTitle(tail))), len(strings.Fields(normTitle(head)))
	if tw > 0 && tw <= maxSiteNameWords && tw < hw {
		t.core, t.guessed = head, normTitle(tail)
	}
	return t
}

// isSite reports whether s is the site's name, declared or guessed.
func (t titleTag) isSite(s string) bool {
	n := normTitle(s)
	return n == t.guessed && n != "" || slices.Contains(t.declared, n)
}

// beforeSiteName is the part of <title> before s when s is the part after
// its last separator (a colon counts when banner says s is the site's
// banner).
func (t titleTag) beforeSiteName(s string, banner func() bool) (string, bool) {
	n := normTitle(s)
	if n == "" {
		return "", false
	}
	if head, tail, ok := splitLast(t.full); ok && normTitle(tail) == n && normTitle(head) != "" {
		return head, true
	}
	if i := strings.LastIndex(t.full, ": "); i > 0 && normTitle(t.full[i+2:]) == n && normTitle(t.full[:i]) != "" && banner() {
		return strings.TrimSpace(t.full[:i]), true
	}
	return "", false
}

// stripDeclared removes a site name the page declares from the end or the
// start of s.
func (t titleTag) stripDeclared(s string) (string, bool) {
	if head, tail, ok := splitLast(s); ok && slices.Contains(t.declared, normTitle(tail)) {
		return head, true
	}
	if head, tail, ok := splitFirst(s); ok && slices.Contains(t.declared, normTitle(head)) {
		return tail, true
	}
	return s, false
}

// agreement ranks a candidate against <title>.
func (t titleTag) agreement(c string) titleAgreement {
	n := normTitle(c)
	switch {
	case n == normTitle(t.core):
		return agreesExactly
	case n == normTitle(t.full):
		return agreesWithTag
	case wordDice(n, normTitle(t.core)) >= minTitleDice:
		return agreesInWords
	}
	return agreesNot
}

// choose picks among candidates, most trusted first, the one that agrees
// best with <title>; a tie goes to the more trusted. Candidates that are
// the site's name are never chosen. Without a <title> the most trusted
// wins.
func (t titleTag) choose(candidates []string) string {
	best, bestAgreement := "", titleAgreement(-1)
	for _, c := range candidates {
		if c == "" || t.isSite(c) {
			continue
		}
		a := agreesNot
		if t.full != "" {
			a = t.agreement(c)
		}
		if a > bestAgreement {
			best, bestAgreement = c, a
		}
	}
	stripped, _ := t.stripDeclared(best)
	return stripped
}

func splitLast(s string) (head, tail string, ok bool) {
	at, sepLen := -1, 0
	for _, sep := range titleSeparators {
		if i := strings.LastIndex(s, sep); i > at {
			at, sepLen = i, len(sep)
		}
	}
	if at <= 0 {
		return s, "", false
	}
	return strings.TrimSpace(s[:at]), strings.TrimSpace(s[at+sepLen:]), true
}

func splitFirst(s string) (head, tail string, ok bool) {
	at, sepLen := len(s), 0
	for _, sep := range titleSeparators {
		if i := strings.Index(s, sep); i >= 0 && i < at {
			at, sepLen = i, len(sep)
		}
	}
	if at == len(s) || at == 0 {
		return s, "", false
	}
	return strings.TrimSpace(s[:at]), strings.TrimSpace(s[at+sepLen:]), true
}

// normTitle folds case and punctuation so that "Storm & flood: live" and
// "storm flood live" compare equal.
func normTitle(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	space := false
	for _, r := range s {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			if space && b.Len() > 0 {
				b.WriteByte(' ')
			}
			b.WriteRune(unicode.ToLower(r))
			space = false
			continue
		}
		space = true
	}
	return b.String()
}

// wordDice is the Dice coefficient of the word sets of two normalised
// titles: 1 for the same words, 0 for none in common.
func wordDice(a, b string) float64 {
	wa, wb := strings.Fields(a), strings.Fields(b)
	if len(wa) == 0 || len(wb) == 0 {
		return 0
	}
	set := make(map[string]bool, len(wb))
	for _, w := range wb {
		set[w] = true
	}
	common, seen := 0, make(map[string]bool, len(wa))
	for _, w := range wa {
		if set[w] && !seen[w] {
			common++
		}
		seen[w] = true
	}
	return 2 * float64(common) / float64(len(seen)+len(set))
}

// firstElement is the first HTML element (not an SVG one of the same
// name) of type a in document order, found
// without a selector so that the walk stops as soon as it is found (the
// <title> sits near the top of the page).
func firstElement(n *html.Node, a atom.Atom) *html.Node {
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type != html.ElementNode {
			continue
		}
		if c.DataAtom == a && c.Namespace == "" {
			return c
		}
		if f := firstElement(c, a); f != nil {
			return f
		}
	}
	return nil
}
