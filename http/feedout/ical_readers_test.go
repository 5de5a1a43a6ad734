package feedout_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/testkit/icaltools"
)

// concert is a one-off at the Blue Note, Berlin time, whose display
// address starts with the venue's name, as many sources write it.
func concert(title string, organizer *domain.Organizer, day int) domain.HappeningDetails {
	start := time.Date(2026, 10, day, 20, 0, 0, 0, berlin)
	end := start.Add(2 * time.Hour)
	return domain.HappeningDetails{
		Identity: "url:https://bluenote.example/" + title, Title: title,
		Time:      domain.HappeningTime{TemporalPattern: domain.PatternSingular, Timezone: "Europe/Berlin"},
		Location:  &domain.Location{Venue: &domain.Venue{Name: "Blue Note"}, DisplayAddress: "Blue Note, Hauptstrasse 1, 10827 Berlin"},
		Organizer: organizer,
		Instances: []domain.HappeningInstance{{Key: "single", ID: uuid.New(), Status: domain.StatusScheduled,
			Occurrences: []domain.Occurrence{{ID: uuid.New(), Start: start, End: &end}}}},
		Source: domain.SiteBlock("https://bluenote.example/" + title),
	}
}

// readByPython is what python3-icalendar reads of a calendar: its
// X-WR-TIMEZONE and each VEVENT's fields, unescaped, and each occurrence
// recurring-ical-events finds in October and November 2026 (with the
// calendar's X-WR-TIMEZONE applied, as that library does), in UTC.
const readByPython = `
import json, sys, datetime, icalendar, recurring_ical_events
cal = icalendar.Calendar.from_ical(open(sys.argv[1], 'rb').read())
out = {'zone': str(cal.get('X-WR-TIMEZONE', '')), 'events': {}, 'starts': []}
for ev in cal.walk('VEVENT'):
    org = ev.get('ORGANIZER')
    out['events'][str(ev.get('SUMMARY'))] = {
        'location': str(ev.get('LOCATION', '')),
        'description': str(ev.get('DESCRIPTION', '')),
        'organizer': str(org) if org is not None else '',
        'cn': str(org.params.get('CN', '')) if org is not None else '',
    }
for occ in recurring_ical_events.of(cal).between(datetime.date(2026, 10, 1), datetime.date(2026, 12, 1)):
    out['starts'].append(occ['DTSTART'].dt.astimezone(datetime.timezone.utc).strftime('%Y-%m-%dT%H:%M:%SZ'))
out['starts'].sort()
print(json.dumps(out))
`

type pythonReading struct {
	Zone   string
	Events map[string]struct{ Location, Description, Organizer, CN string }
	Starts []string
}

func readWithPython(t *testing.T, body []byte) pythonReading {
	t.Helper()
	var r pythonReading
	out := icaltools.Python(t, readByPython, body)
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("python3-icalendar's reading %q: %v", out, err)
	}
	return r
}

// The calendar details an outside reader sees: the venue once, the zone
// the events share as the calendar's, an organizer with an address of
// its own or none at all. Read with python3-icalendar (and
// recurring-ical-events for the times) and with khal.
func TestOutsideReadersSeeTheVenueOnceTheSharedZoneAndNoInventedOrganizer(t *testing.T) {
	byName := concert("By name only", &domain.Organizer{Name: "Jazz Club"}, 9)
	byURL := concert("With a page", &domain.Organizer{Name: "Choir", URL: "https://choir.example/"}, 10)
	byMail := concert("With an address", &domain.Organizer{Name: "Band", Contact: "band@example.org"}, 11)
	_, body := render(t, byName, byURL, byMail)
	if strings.Contains(string(body), "invalid") {
		t.Fatalf("the calendar invents an address:\n%s", body)
	}

	r := readWithPython(t, body)
	checks := []struct{ name, got, want string }{
		{"every event is in Berlin, so the calendar is", r.Zone, "Europe/Berlin"},
		{"the venue is not repeated before an address that starts with it", r.Events["By name only"].Location, "Blue Note, Hauptstrasse 1, 10827 Berlin"},
		{"an organizer known by name only has no ORGANIZER", r.Events["By name only"].Organizer, ""},
		{"its name is in the description", r.Events["By name only"].Description, "Organizer: Jazz Club"},
		{"an organizer with a page has it as address", r.Events["With a page"].Organizer, "https://choir.example/"},
		{"and its name as CN", r.Events["With a page"].CN, "Choir"},
		{"and nothing added to the description", r.Events["With a page"].Description, ""},
		{"an organizer with an email address is mailto", r.Events["With an address"].Organizer, "mailto:band@example.org"},
		{"and its name as CN", r.Events["With an address"].CN, "Band"},
		// 20:00 in Berlin on 9-11 October (summer time) is 18:00 UTC: a
		// reader applying X-WR-TIMEZONE keeps each instant.
		{"the times, read in the calendar's zone", strings.Join(r.Starts, " "), "2026-10-09T18:00:00Z 2026-10-10T18:00:00Z 2026-10-11T18:00:00Z"},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("python3-icalendar: %s: %q, want %q", c.name, c.got, c.want)
		}
	}

	khal := string(icaltools.Khal(t, body, "{title}|{location}|{organizer}|{start}"))
	for _, want := range []string{
		"By name only|Blue Note, Hauptstrasse 1, 10827 Berlin||2026-10-09 18:00",
		"With a page|Blue Note, Hauptstrasse 1, 10827 Berlin|Choir (//choir.example/)|2026-10-10 18:00",
		"With an address|Blue Note, Hauptstrasse 1, 10827 Berlin|Band (band@example.org)|2026-10-11 18:00",
	} {
		if !strings.Contains(khal, want+"\n") {
			t.Errorf("khal printics shows no line %q:\n%s", want, khal)
		}
	}
}

// Events in different zones share none: the calendar's zone is UTC, and
// each event keeps its own TZID, so an outside reader places each where
// it is.
func TestOutsideReadersSeeUTCAsTheZoneOfACalendarWhoseEventsDiffer(t *testing.T) {
	_, body := render(t, concert("In Berlin", nil, 9), cancelledTalk())
	r := readWithPython(t, body)
	if r.Zone != "UTC" {
		t.Errorf("X-WR-TIMEZONE %q, want UTC for a Berlin event beside a UTC one", r.Zone)
	}
	if got, want := strings.Join(r.Starts, " "), "2026-10-09T18:00:00Z 2026-10-14T17:30:00Z"; got != want {
		t.Errorf("recurring-ical-events finds the starts %s, want %s", got, want)
	}
}
