package calendar

import (
	"strings"
	"testing"

	"github.com/feedsvc/feedsvc/ingest/document"
	"github.com/feedsvc/feedsvc/testkit/icaltools"
)

// countOccurrences prints how many occurrences python3-recurring-ical-
// events finds in a calendar (all of them: the rules tested are counted).
const countOccurrences = `
import sys, datetime, icalendar, recurring_ical_events
cal = icalendar.Calendar.from_ical(open(sys.argv[1], 'rb').read())
print(len(recurring_ical_events.of(cal).between(datetime.date(2000, 1, 1), datetime.date(2100, 1, 1))))
`

// A counted rule's words say how many times the event happens: the
// COUNT less what EXDATEs take out, plus RDATEs; a calendar app shows
// that many, and "25 times" beside 24 entries reads as a lost one.
func TestACountedRuleSaysHowManyTimesItOccurs(t *testing.T) {
	for _, tc := range []struct {
		name, lines, want string
	}{
		{"a rule alone occurs its count", "RRULE:FREQ=WEEKLY;COUNT=25", ", 25 times"},
		{"an excluded date is one time less", "RRULE:FREQ=WEEKLY;COUNT=25\r\nEXDATE;TZID=Europe/Berlin:20241119T190000", ", 24 times"},
		{"an excluded date the rule never reaches changes nothing", "RRULE:FREQ=WEEKLY;COUNT=25\r\nEXDATE;TZID=Europe/Berlin:20241120T190000", ", 25 times"},
		{"an added date is one time more", "RRULE:FREQ=WEEKLY;COUNT=3\r\nRDATE;TZID=Europe/Berlin:20241102T190000", ", 4 times"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//test//EN\r\nBEGIN:VEVENT\r\nUID:counted@test\r\nDTSTAMP:20241001T000000Z\r\n" +
				"DTSTART;TZID=Europe/Berlin:20241105T190000\r\nDTEND;TZID=Europe/Berlin:20241105T210000\r\nSUMMARY:Choir\r\n" +
				tc.lines + "\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"
			res, err := Extract(document.Document{URL: "https://choir.example/rehearsals.ics", ContentType: "text/calendar", Body: []byte(body)}, Options{Now: crawlNow})
			if err != nil {
				t.Fatal(err)
			}
			text := byTitle(t, res, "Choir").Time.DisplayText
			if !strings.HasSuffix(text, tc.want) {
				t.Fatalf("displayText %q, want it to end %q", text, tc.want)
			}
			// An outside reader of the same calendar counts as many.
			counted := strings.TrimSpace(string(icaltools.Python(t, countOccurrences, []byte(body))))
			if want := strings.TrimSuffix(strings.TrimPrefix(tc.want, ", "), " times"); counted != want {
				t.Fatalf("recurring-ical-events counts %s occurrences, displayText %q", counted, text)
			}
		})
	}
}
