package nearcopy

import (
	"net/url"
	"slices"
	"strings"
)

// Page is what is compared of an article.
type Page struct {
	URL       string
	Title     string
	Signature Signature
	// Normal, when not empty, is NormalAddress(URL), computed once by a
	// caller that compares the page with many (Normalized); Compare
	// computes it otherwise, for each comparison.
	Normal string
}

// Normalized is the page with Normal set.
func (p Page) Normalized() Page {
	p.Normal = NormalAddress(p.URL)
	return p
}

// normal is NormalAddress(p.URL).
func (p Page) normal() string {
	if p.Normal != "" {
		return p.Normal
	}
	return NormalAddress(p.URL)
}

// Verdict is how two pages compare.
type Verdict struct {
	// Copy is true when the pages are one story.
	Copy bool
	// By says what decided: "address", "text", or "" when not a copy.
	By string
	// Similarity is the estimated similarity of the texts (0 when either
	// is too short to compare).
	Similarity float64
}

// Compare decides whether b is a copy of a (the verdict is the same both
// ways). Pages at one address (SameAddress) are copies. Otherwise the
// texts decide, when both are long enough to compare:
//
//   - on one site (one host), only a text that is all but the same
//     (Similarity of SameSiteCopyAt or more): a site's pages share its
//     template, and a site that publishes a story twice publishes the
//     same text;
//   - across sites, when the shorter text is mostly in the longer one
//     (Containment of ContainedAt or more, a republished wire story with
//     its edits, an AMP or teaser version that stops early, another
//     site's boilerplate around it), and the texts are still alike as a
//     whole (Similarity of MinSimilarity or more); with titles that share
//     less than RelatedTitles of their words (a rewritten headline), the
//     shorter text must be in the longer one to RewrittenContainedAt.
//
// Titles never make a copy by themselves: two stories under similar
// headlines have different texts.
func Compare(a, b Page) Verdict {
	sim := Similarity(a.Signature, b.Signature)
	na, nb := a.normal(), b.normal()
	if a.URL != "" && na == nb {
		return Verdict{Copy: true, By: "address", Similarity: sim}
	}
	v := Verdict{Similarity: sim}
	if sim == 0 {
		return v
	}
	if hostOf(na) == hostOf(nb) {
		if sim >= SameSiteCopyAt {
			v.Copy, v.By = true, "text"
		}
		return v
	}
	c := Containment(a.Signature, b.Signature)
	switch {
	case sim < MinSimilarity:
	case c >= RewrittenContainedAt, c >= ContainedAt && TitleOverlap(a.Title, b.Title) >= RelatedTitles:
		v.Copy, v.By = true, "text"
	}
	return v
}

// Containment estimates the share of the shorter text's shingles that
// the longer text has too, from their Similarity and their sizes; 0 when
// either is too short to compare.
func Containment(a, b Signature) float64 {
	j := Similarity(a, b)
	if j == 0 {
		return 0
	}
	na, nb := float64(a.Words-ShingleWords+1), float64(b.Words-ShingleWords+1)
	both := j / (1 + j) * (na + nb)
	return min(1, both/min(na, nb))
}

// hostOf is the host of a normal address (NormalAddress).
func hostOf(normal string) string {
	h, _, _ := strings.Cut(normal, "/")
	return h
}

// titlePrefixes are labels a republisher puts before a headline.
var titlePrefixes = []string{"breaking", "update", "updated", "updates", "exclusive", "watch", "live", "video", "analysis", "opinion", "wire", "ap", "reuters", "afp", "dpa"}

// stopWords are too common in headlines to relate two.
var stopWords = map[string]bool{
	"a": true, "an": true, "the": true, "of": true, "in": true, "on": true, "at": true, "to": true, "for": true,
	"and": true, "or": true, "is": true, "are": true, "was": true, "with": true, "by": true, "from": true, "as": true,
	"its": true, "it": true, "after": true, "new": true, "says": true, "s": true,
}

// titleWords are a headline's words that can relate it to another: no
// stop words, no republishers' labels in front.
func titleWords(t string) []string {
	ws := Words(t)
	for len(ws) > 0 && slices.Contains(titlePrefixes, ws[0]) {
		ws = ws[1:]
	}
	out := ws[:0:0]
	for _, w := range ws {
		if !stopWords[w] && !slices.Contains(out, w) {
			out = append(out, w)
		}
	}
	return out
}

// TitleOverlap is the share of the shorter title's words the other title
// has too; 0 when either has none.
func TitleOverlap(a, b string) float64 {
	wa, wb := titleWords(a), titleWords(b)
	if len(wa) == 0 || len(wb) == 0 {
		return 0
	}
	if len(wb) < len(wa) {
		wa, wb = wb, wa
	}
	n := 0
	for _, w := range wa {
		if slices.Contains(wb, w) {
			n++
		}
	}
	return float64(n) / float64(len(wa))
}

// trackingParams are query parameters that name who sent a reader, never
// what is read. A name ending in * is a prefix.
var trackingParams = []string{
	"utm_*", "fbclid", "gclid", "dclid", "gbraid", "wbraid", "msclkid", "mc_cid", "mc_eid", "igshid", "yclid",
	"_ga", "_gl", "ref", "ref_src", "ref_url", "cmpid", "cmp", "ncid", "ocid", "src", "smid", "sr_share",
	"share", "campaign", "__twitter_impression", "at_medium", "at_campaign", "s_cid", "spm",
	// render variants of one page
	"amp", "outputtype", "output", "print", "view", "printable", "format", "page_format",
}

func tracking(name string) bool {
	name = strings.ToLower(name)
	for _, p := range trackingParams {
		if prefix, ok := strings.CutSuffix(p, "*"); ok {
			if strings.HasPrefix(name, prefix) {
				return true
			}
		} else if name == p {
			return true
		}
	}
	return false
}

// variantSuffixes end the path of an AMP or print rendering of a page.
var variantSuffixes = []string{"/amp", ".amp", "/amp.html", "/print", "/print.html", "/printable", "/index.html", "/index.htm", "/index.php"}

// NormalAddress is the address with what does not name the page taken
// away: the scheme (http and https are one page), a www., m. or amp.
// host prefix, the port when it is the default, tracking and rendering
// query parameters, an AMP or print path ending, a leading /amp/ path
// segment, a trailing slash and the fragment. The rest of the query is
// sorted. A value that is not an absolute URL is returned as it is.
func NormalAddress(raw string) string {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || u.Host == "" {
		return raw
	}
	host := strings.ToLower(u.Hostname())
	for _, p := range []string{"www.", "m.", "amp.", "mobile."} {
		if h, ok := strings.CutPrefix(host, p); ok && strings.Contains(h, ".") {
			host = h
			break
		}
	}
	if port := u.Port(); port != "" && port != "80" && port != "443" {
		host += ":" + port
	}
	path := u.EscapedPath()
	for changed := true; changed; {
		changed = false
		lower := strings.ToLower(path)
		for _, s := range variantSuffixes {
			if strings.HasSuffix(lower, s) {
				path, changed = path[:len(path)-len(s)], true
				break
			}
		}
		if strings.HasSuffix(path, "/") {
			path, changed = strings.TrimRight(path, "/"), true
		}
	}
	if p, ok := strings.CutPrefix(path, "/amp/"); ok {
		path = "/" + p
	}
	q := u.Query()
	for k := range q {
		if tracking(k) {
			delete(q, k)
		}
	}
	out := host + path
	if enc := q.Encode(); enc != "" {
		out += "?" + enc
	}
	return out
}

// SameAddress reports whether two addresses name one page (NormalAddress).
func SameAddress(a, b string) bool {
	return NormalAddress(a) == NormalAddress(b)
}
