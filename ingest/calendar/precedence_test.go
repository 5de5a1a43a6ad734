package calendar_test

import (
	"testing"
	"time"

	"github.com/feedsvc/feedsvc/ingest/calendar"
	"github.com/feedsvc/feedsvc/ingest/document"
)

// Merging the listings of one event item ranks them by
// domain.HappeningDetails.Precedence: the rank the crawl recorded with the
// details, or for details recorded without one, the rule read off them,
// which must be the rank the extractor gave their document (but for a
// calendar entry naming its page, at an address without .ics).
func TestTheRankReadOffAHappeningsDetailsIsTheOneItsDocumentGot(t *testing.T) {
	event := func(name, extra string) string {
		return `{"@context":"https://schema.org","@type":"Event","name":"` + name + `","startDate":"2026-12-03T18:00:00+01:00",` +
			`"location":{"@type":"Place","name":"Hall","address":"Main St 1, Kraków"}` + extra + `}`
	}
	page := func(ld string) []byte {
		return []byte(`<!doctype html><html><head><title>x</title><script type="application/ld+json">` + ld + `</script></head><body><h1>x</h1></body></html>`)
	}
	ics := []byte("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//t//EN\r\nBEGIN:VEVENT\r\nUID:trio@venue.example\r\nDTSTAMP:20261101T000000Z\r\n" +
		"DTSTART:20261203T170000Z\r\nDTEND:20261203T183000Z\r\nSUMMARY:Trio\r\nEND:VEVENT\r\nBEGIN:VEVENT\r\nUID:jam@venue.example\r\n" +
		"URL:https://venue.example/jam\r\nDTSTAMP:20261101T000000Z\r\nDTSTART:20261203T193000Z\r\nSUMMARY:Jam\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n")
	for _, tc := range []struct {
		name string
		doc  document.Document
		// unranked: the rule read off details recorded without their rank
		// takes a calendar entry naming its page for a listing.
		unranked bool
	}{
		{"an event's own page", document.Document{URL: "https://tickets.example/trio", ContentType: "text/html", Body: page(event("Trio", ""))}, false},
		{"a page listing two events", document.Document{URL: "https://venue.example/programme", ContentType: "text/html",
			Body: page("[" + event("Trio", "") + "," + event("Jam", "") + "]")}, false},
		{"a listing linking its events' pages", document.Document{URL: "https://venue.example/programme", ContentType: "text/html",
			Body: page("[" + event("Trio", `,"url":"https://venue.example/trio"`) + "," + event("Jam", `,"url":"https://venue.example/jam"`) + "]")}, false},
		{"a calendar file", document.Document{URL: "https://venue.example/season", ContentType: "text/calendar", Body: ics}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := calendar.Extract(tc.doc, calendar.Options{Now: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)})
			if err != nil || len(res.Happenings) == 0 {
				t.Fatalf("extracted %d events: %v", len(res.Happenings), err)
			}
			for _, d := range res.Happenings {
				want := calendar.Precedence(tc.doc, d)
				if got := d.Precedence(); got != want && !tc.unranked {
					t.Errorf("%q (%s): the details rank %d, the document %d", d.Title, d.Identity, got, want)
				}
				// What the crawl records carries the document's rank.
				d.Rank = want
				if got := d.Precedence(); got != want {
					t.Errorf("%q (%s): details recorded with rank %d rank %d", d.Title, d.Identity, want, got)
				}
			}
		})
	}
}
