package calendar

import (
	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/ingest/document"
)

// Precedence of a document as the word on an event it holds, for when two
// documents say different things about one event (a page and its .ics
// export rarely word a description alike): the event's own page over a
// page that lists it among others, over a calendar file, which carries
// less (no images, offers or capacity).
// The rule is the domain's (domain.HappeningDetails.Precedence reads it
// off a stored listing, to merge the listings of one event item).
const (
	PrecedenceCalendar = domain.PrecedenceCalendar
	PrecedenceListing  = domain.PrecedenceListing
	PrecedenceOwnPage  = domain.PrecedenceOwnPage
)

// Precedence ranks doc as a source of the event d it holds.
func Precedence(doc document.Document, d domain.HappeningDetails) int {
	switch {
	case isCalendar(doc):
		return PrecedenceCalendar
	case d.Identity == "url:"+normalizeURL(doc.URL):
		return PrecedenceOwnPage
	default:
		return PrecedenceListing
	}
}
