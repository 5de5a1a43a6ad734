package calendar

import (
	"bytes"
)

// Reading a page for events costs a page without any a few microseconds,
// not a second DOM: the crawler reads every page it fetches for events,
// whatever feeds want them (most pages are news articles, already parsed
// once for their metadata). mayHold looks at the page's bytes for what
// fromHTML could find, and fromHTML parses only pages that pass.

// eventTypeNames are substrings every type isEventType accepts contains,
// as the type is written in JSON-LD (@type) or Microdata (itemtype):
// "Event" ends all but eventTypes' names.
var eventTypeNames = [][]byte{[]byte("Event"), []byte("Festival"), []byte("CourseInstance")}

// calendarLinkMarks are substrings, lower-cased, of every link calendarURL
// accepts: an .ics file, a ?ical= export, a webcal: subscription, or a
// link typed text/calendar.
var calendarLinkMarks = [][]byte{[]byte(".ics"), []byte("ical="), []byte("webcal:"), []byte("text/calendar")}

// mayHold reports whether a page (UTF-8) can hold a schema.org event or a
// calendar link. It is a necessary condition, not a sufficient one: a type
// name or link written with character references (&#69;vent) or a JSON
// \u escape is not seen, as no publisher writes them.
func mayHold(page []byte) bool {
	for _, n := range eventTypeNames {
		if bytes.Contains(page, n) {
			return true
		}
	}
	return hasFold(page, calendarLinkMarks)
}

// hasFold reports whether s contains one of marks (lower-case ASCII),
// ignoring ASCII case, without copying s: each mark is looked for at the
// occurrences of its first byte that has no case ('.', '=', ':', '/'),
// which bytes.IndexByte finds fast, and most occurrences are ruled out by
// the byte beside them.
func hasFold(s []byte, marks [][]byte) bool {
	for _, m := range marks {
		k := bytes.IndexFunc(m, func(r rune) bool { return r < 'a' || r > 'z' })
		if k < 0 {
			k = 0
		}
		// next is the mark's byte beside its anchor, checked first.
		next := k + 1
		if next == len(m) {
			next = k - 1
		}
		for from := k; from < len(s); {
			i := bytes.IndexByte(s[from:], m[k])
			if i < 0 {
				break
			}
			at := from + i - k
			from += i + 1
			if at+len(m) > len(s) || lower(s[at+next]) != m[next] {
				continue
			}
			j := 0
			for j < len(m) && lower(s[at+j]) == m[j] {
				j++
			}
			if j == len(m) {
				return true
			}
		}
	}
	return false
}

func lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}
