package calendar

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The prefilter may only ever spare a page that holds nothing: every
// fixture page that yields events or calendar links must pass it.
func TestEveryPageThatHoldsEventsOrCalendarLinksPassesThePrefilter(t *testing.T) {
	pages, err := filepath.Glob(filepath.Join("testdata", "*.html"))
	if err != nil || len(pages) == 0 {
		t.Fatalf("no fixture pages: %v", err)
	}
	for _, p := range pages {
		name := filepath.Base(p)
		res := extractFixture(t, name, "https://venue.example/"+name)
		if len(res.Happenings) == 0 && len(res.Calendars) == 0 {
			continue
		}
		body, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if !mayHold(body) {
			t.Errorf("%s holds %d events and %d calendars, but the prefilter spares it", name, len(res.Happenings), len(res.Calendars))
		}
	}
}

func TestThePrefilterPassesEveryWayAPageNamesAnEventOrCalendar(t *testing.T) {
	tests := []struct {
		name string
		page string
		want bool
	}{
		{"a news page with an article's JSON-LD is spared", `<script type="application/ld+json">{"@type":"NewsArticle","headline":"x"}</script><p>events of the week. politics.</p>`, false},
		{"a JSON-LD event subtype passes", `{"@type":"MusicEvent"}`, true},
		{"a Festival passes", `{"@type":"https://schema.org/Festival"}`, true},
		{"a course instance passes", `<div itemtype="http://schema.org/CourseInstance">`, true},
		{"an .ics link in capitals passes", `<a href="/SEASON.ICS">`, true},
		{"a webcal subscription passes", `<a href="WebCal://venue.example/c">`, true},
		{"an iCal export passes", `<a href="/?ical=1">`, true},
		{"a link typed text/calendar passes", `<link type="Text/Calendar" href="/feed">`, true},
		{"a mark cut by the page's end is spared", `<a href="/x.ic`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := mayHold([]byte(tt.page)); got != tt.want {
				t.Errorf("mayHold(%q) = %v, want %v", tt.page, got, tt.want)
			}
			if got := mayHold([]byte(strings.Repeat("x", 10) + tt.page)); got != tt.want {
				t.Errorf("after other bytes mayHold(%q) = %v, want %v", tt.page, got, tt.want)
			}
		})
	}
}
