package calendar

import (
	"html"
	"strings"
	"unicode/utf8"

	"github.com/microcosm-cc/bluemonday"

	"github.com/feedsvc/feedsvc/ingest/extract"
)

// titlePolicy keeps no markup: a title is text, escaped as HTML. A
// policy is safe for concurrent use once built.
var titlePolicy = bluemonday.StrictPolicy()

// sanitizeTitle is the title as safe HTML text.
func sanitizeTitle(s string) string {
	s = titlePolicy.Sanitize(s)
	// Quotes need no escaping in element content; the sanitiser escapes
	// them anyway.
	s = strings.NewReplacer("&#39;", "'", "&#34;", `"`).Replace(s)
	return strings.Join(strings.Fields(s), " ")
}

// sanitizeDescription is the description as safe HTML (extract.SafeHTML).
func sanitizeDescription(s string) string {
	s = extract.SafeHTML(s)
	return strings.TrimSpace(strings.ReplaceAll(s, "&#39;", "'"))
}

// textToHTML turns plain text (iCalendar, Microdata) into the HTML every
// draft carries: escaped, so "a <b> c" stays readable instead of losing a
// tag, with its line breaks kept.
func textToHTML(s string) string {
	return strings.ReplaceAll(html.EscapeString(strings.TrimSpace(s)), "\n", "<br>")
}

// looksLikeHTML: a text value that holds markup, as some calendar
// producers write descriptions.
func looksLikeHTML(s string) bool {
	l := strings.ToLower(s)
	for _, tag := range []string{"<br", "<p>", "<p ", "<a ", "</a>", "<b>", "<i>", "<strong>", "<em>", "<ul>", "<li>", "<div"} {
		if strings.Contains(l, tag) {
			return true
		}
	}
	return false
}

// shortDescriptionRunes bounds the plain-text summary of a description.
const shortDescriptionRunes = 200

// shortDescription is a plain-text summary of a long description (cut at
// a word), empty when the description is short enough to be its own.
func shortDescription(descriptionHTML string) string {
	text := plainText(descriptionHTML)
	if utf8.RuneCountInString(text) <= shortDescriptionRunes {
		return ""
	}
	cut := string([]rune(text)[:shortDescriptionRunes])
	if i := strings.LastIndexByte(cut, ' '); i > len(cut)/2 {
		cut = cut[:i]
	}
	return html.EscapeString(strings.TrimRight(cut, " ,;:.-") + "…")
}

// plainText is the text of sanitised HTML, entities decoded, whitespace
// collapsed.
func plainText(s string) string {
	s = titlePolicy.Sanitize(strings.NewReplacer("<br>", " ", "</p>", " ", "</li>", " ").Replace(s))
	return strings.Join(strings.Fields(html.UnescapeString(s)), " ")
}
