package calendar

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/ingest/document"
)

func TestAWeeklyMeetupKeeps19LocalAcrossTheClockChangeWithItsExceptionAndOverrides(t *testing.T) {
	res := extractFixture(t, "google-export.ics", "https://calendar.example/ical/stammtisch/public/basic.ics")
	e := byTitle(t, res, "Go-Stammtisch")
	type inst struct {
		key, status string
		previous    string
		start, end  string
	}
	var got []inst
	for _, in := range e.Instances {
		if len(in.Occurrences) != 1 {
			t.Fatalf("instance %s has %d occurrences", in.Key, len(in.Occurrences))
		}
		o := in.Occurrences[0]
		i := inst{key: in.Key, status: in.Status, start: o.Start.Format(time.RFC3339), end: o.End.Format(time.RFC3339)}
		if in.PreviousStart != nil {
			i.previous = in.PreviousStart.Format(time.RFC3339)
		}
		got = append(got, i)
	}
	want := []inst{
		{"2024-10-01T17:00:00Z", "scheduled", "", "2024-10-01T17:00:00Z", "2024-10-01T19:00:00Z"}, // 19:00 CEST
		{"2024-10-08T17:00:00Z", "scheduled", "", "2024-10-08T17:00:00Z", "2024-10-08T19:00:00Z"},
		// 15 October is an EXDATE.
		{"2024-10-22T17:00:00Z", "scheduled", "", "2024-10-22T17:00:00Z", "2024-10-22T19:00:00Z"},
		// Clocks go back on 27 October: 19:00 CET is 18:00 UTC.
		{"2024-10-29T18:00:00Z", "scheduled", "", "2024-10-29T18:00:00Z", "2024-10-29T20:00:00Z"},
		// Moved to 20:00 by a RECURRENCE-ID override: keeps its key, rescheduled.
		{"2024-11-05T18:00:00Z", "rescheduled", "2024-11-05T18:00:00Z", "2024-11-05T19:00:00Z", "2024-11-05T21:00:00Z"},
		// Cancelled by an override.
		{"2024-11-12T18:00:00Z", "cancelled", "", "2024-11-12T18:00:00Z", "2024-11-12T20:00:00Z"},
		{"2024-11-19T18:00:00Z", "scheduled", "", "2024-11-19T18:00:00Z", "2024-11-19T20:00:00Z"},
		// UNTIL=20241126T180000Z includes the last Tuesday.
		{"2024-11-26T18:00:00Z", "scheduled", "", "2024-11-26T18:00:00Z", "2024-11-26T20:00:00Z"},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d instances %+v, want %d", len(got), got, len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("instance %d\n got %+v\nwant %+v", i, got[i], want[i])
		}
	}
	created, modified := at("2024-09-01T08:00:00Z"), at("2024-10-08T20:00:00Z")
	checkAll(t, []check{
		{"the identity is the UID (no URL)", e.Identity, "uid:5v1kq0h2p7b3n9c8m4x6z2a1s0@google.com"},
		{"the zone is the TZID", e.Time.Timezone, "Europe/Berlin"},
		{"recurring", e.Time.TemporalPattern, domain.PatternRecurring},
		{"the rule in words", e.Time.DisplayText, "Every week on Tuesday, 19:00–21:00 (Europe/Berlin), from Tue 1 Oct 2024, until Tue 26 Nov 2024"},
		{"escaped commas and folded lines of the description are read, line breaks kept", e.Description, "Offener Stammtisch für alle, die Go schreiben.<br>Bitte vorher anmelden."},
		{"the location line is read into its parts", *e.Location, domain.Location{
			Venue:          &domain.Venue{Name: "Café Kreuzberg", Address: "Oranienstraße 7, 10997 Berlin"},
			DisplayAddress: "Café Kreuzberg, Oranienstraße 7, 10997 Berlin, Germany",
			Locality:       "Berlin", Country: "Germany",
			// Berlin's centre, for relevance (the address has no coordinates).
			ApproximateCoordinates: &domain.Coordinates{Lat: 52.5244, Lng: 13.4105},
		}},
		{"CREATED is when it was published", e.PublishedAt, &created},
		{"LAST-MODIFIED is when it changed", e.ModifiedAt, &modified},
		{"a calendar file is no event's page", e.PrimaryURL, ""},
		{"the source is the calendar", e.Source, domain.SiteBlock("https://calendar.example/ical/stammtisch/public/basic.ics")},
	})
}

func TestTheOtherEventsOfAGoogleExport(t *testing.T) {
	res := extractFixture(t, "google-export.ics", "https://calendar.example/ical/stammtisch/public/basic.ics")
	if len(res.Happenings) != 4 || res.Dropped != 0 {
		t.Fatalf("events %d dropped %d; want 4, 0", len(res.Happenings), res.Dropped)
	}
	talk := byTitle(t, res, "Vortrag: Context &amp; Cancellation")
	festival := byTitle(t, res, "Sommerklang Festival 2024")
	cancelled := byTitle(t, res, "Abgesagt: Weihnachtsfeier")
	checkAll(t, []check{
		{"a UTC event is shown in the calendar's zone", talk.Time.DisplayText, "Wed 23 Oct 2024, 18:00–19:30 (Europe/Berlin)"},
		{"HTML in a DESCRIPTION is sanitised, not escaped", talk.Description, `<b>Vortrag</b> über <a href="https://example.org/talk" rel="nofollow">Kontext</a>`},
		{"an empty LOCATION is no location", talk.Location, (*domain.Location)(nil)},
		{"an all-day festival has one occurrence per day", len(festival.Instances[0].Occurrences), 3},
		{"its days are local midnights: DTEND is exclusive", [2]time.Time{festival.Instances[0].Occurrences[0].Start, *festival.Instances[0].Occurrences[2].End}, [2]time.Time{at("2024-06-06T22:00:00Z"), at("2024-06-09T22:00:00Z")}},
		{"its identity is its URL (a root keeps its slash)", festival.Identity, "url:https://sommerklang.example/"},
		{"STATUS:CANCELLED cancels a one-off event", cancelled.Instances[0].Status, domain.StatusCancelled},
		{"an event without an end has no end", cancelled.Instances[0].Occurrences[0].End, (*time.Time)(nil)},
	})
}

func TestAnOutlookCalendarWithAWindowsZoneName(t *testing.T) {
	res := extractFixture(t, "outlook-windows-zone.ics", "https://firma.example/team.ics")
	e := byTitle(t, res, "Daily Stand-up")
	var starts []time.Time
	for _, in := range e.Instances {
		starts = append(starts, in.Occurrences[0].Start)
	}
	// COUNT=5 from Monday 4 November, two of them excluded by one
	// comma-separated EXDATE; 09:00 CET is 08:00 UTC.
	want := []time.Time{at("2024-11-04T08:00:00Z"), at("2024-11-07T08:00:00Z"), at("2024-11-08T08:00:00Z")}
	checkAll(t, []check{
		{"the recurrences", starts, want},
		{"the Windows zone is its IANA zone", e.Time.Timezone, "Europe/Berlin"},
		{"a meeting link as location is an online place", *e.Location.Online, domain.Online{Platform: "Microsoft Teams", URL: "https://teams.microsoft.com/l/meetup-join/19%3ameeting"}},
		{"the organiser from CN and mailto", *e.Organizer, domain.Organizer{Name: "Team Lead", Contact: "lead@firma.example"}},
		// COUNT=5 less the two EXDATEs: what occurs, not what the rule counts.
		{"a counted rule in words counts what occurs", e.Time.DisplayText, "Every day, 09:00–09:30 (Europe/Berlin), from Mon 4 Nov 2024, 3 times"},
	})
}

// The page and its .ics export are one event: same identity, same
// instance, same occurrence.
func TestAPageAndItsCalendarAreOneEvent(t *testing.T) {
	page := extractFixture(t, "tec-jazz-night.html", "https://jazzkeller.example/event/jazz-night/")
	cal := extractFixture(t, "tec-jazz-night.ics", "https://jazzkeller.example/event/jazz-night/?ical=1")
	if len(page.Happenings) != 1 || len(cal.Happenings) != 1 {
		t.Fatalf("events: page %d, calendar %d", len(page.Happenings), len(cal.Happenings))
	}
	p, c := page.Happenings[0], cal.Happenings[0]
	checkAll(t, []check{
		{"one identity", c.Identity, p.Identity},
		{"one event id", domain.HappeningID(c.Identity), domain.HappeningID(p.Identity)},
		{"one title", c.Title, p.Title},
		{"one instance key", c.Instances[0].Key, p.Instances[0].Key},
		{"one occurrence", c.Instances[0].Occurrences, p.Instances[0].Occurrences},
		{"the calendar's image attachment", c.PrimaryImage, p.PrimaryImage},
		{"the calendar's coordinates", *c.Location.Coordinates, domain.Coordinates{Lat: 52.5321, Lng: 13.3849}},
	})
}

func TestARecrawlWithinTheMonthIsNoChangeAndAMovedDateIsOne(t *testing.T) {
	source := uuid.New()
	first, err := Extract(fixture(t, "google-export.ics", "https://calendar.example/basic.ics"), Options{Now: crawlNow})
	if err != nil {
		t.Fatal(err)
	}
	for _, later := range []struct {
		name  string
		after time.Duration
	}{
		{"a re-crawl nine days later", 9 * 24 * time.Hour},
		// The next month's expansion starts a month later and so lists
		// fewer past recurrences: that is no change either.
		{"a re-crawl in the next month", 40 * 24 * time.Hour},
	} {
		again, err := Extract(fixture(t, "google-export.ics", "https://calendar.example/basic.ics"), Options{Now: crawlNow.Add(later.after)})
		if err != nil {
			t.Fatal(err)
		}
		for i, e := range first.Happenings {
			var ev domain.Happening
			for _, f := range ev.Discover(source, e, crawlNow) {
				ev.Apply(f)
			}
			if changes := ev.Discover(source, again.Happenings[i], crawlNow.Add(later.after)); len(changes) != 0 {
				t.Errorf("%s: %s is %d changes, want none", e.Title, later.name, len(changes))
			}
		}
	}

	// The ticketing site moves a play and says so.
	before := `<script type="application/ld+json">{"@type":"TheaterEvent","name":"Der zerbrochne Krug","url":"https://tickets.example/e/4712","startDate":"2024-11-16T19:30:00+01:00"}</script>`
	after := `<script type="application/ld+json">{"@type":"TheaterEvent","name":"Der zerbrochne Krug","url":"https://tickets.example/e/4712","startDate":"2025-01-18T19:30:00+01:00","previousStartDate":"2024-11-16T19:30:00+01:00","eventStatus":"https://schema.org/EventRescheduled"}</script>`
	r1, _ := Extract(htmlDoc("https://tickets.example/e/4712", before), Options{Now: crawlNow})
	r2, _ := Extract(htmlDoc("https://tickets.example/e/4712", after), Options{Now: crawlNow})
	var ev domain.Happening
	found := ev.Discover(source, r1.Happenings[0], crawlNow)
	for _, f := range found {
		ev.Apply(f)
	}
	changes := ev.Discover(source, r2.Happenings[0], crawlNow)
	if len(changes) != 1 {
		t.Fatalf("the move is %d changes, want 1", len(changes))
	}
	changed, ok := changes[0].(domain.HappeningChanged)
	if !ok {
		t.Fatalf("the move is %T, want EventChanged", changes[0])
	}
	old := found[0].(domain.HappeningDiscovered).Details.Instances[0]
	moved := changed.Details.Instances[0]
	if moved.ID != old.ID || moved.Status != domain.StatusRescheduled || !moved.PreviousStart.Equal(at("2024-11-16T18:30:00Z")) {
		t.Errorf("moved instance %+v, was %+v: want the same id, rescheduled, with its previous start", moved, old)
	}
}

func TestRecurrencesAreBounded(t *testing.T) {
	tests := []struct {
		name          string
		event         string
		wantInstances int
		wantHorizon   time.Time
		wantFirst     time.Time
	}{
		{"a minutely rule stops at the domain's bounds, its horizon at the last one kept",
			"DTSTART:20241001T000000Z\r\nRRULE:FREQ=MINUTELY\r\n", 1000, at("2024-10-01T16:39:00Z"), at("2024-10-01T00:00:00Z")},
		{"a daily rule begun years ago is expanded from the first of the month a week before now to the horizon",
			"DTSTART;TZID=Europe/Berlin:20100104T190000\r\nRRULE:FREQ=DAILY\r\n", 189, crawlNow.Add(DefaultHorizon), at("2024-10-01T17:00:00Z")},
		{"a rule that never matches keeps DTSTART alone",
			"DTSTART:20241010T100000Z\r\nRRULE:FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=30\r\n", 1, crawlNow.Add(DefaultHorizon), at("2024-10-10T10:00:00Z")},
		{"a series that ended keeps its last recurrence",
			"DTSTART:20230102T100000Z\r\nRRULE:FREQ=WEEKLY;COUNT=3\r\n", 1, crawlNow.Add(DefaultHorizon), at("2023-01-16T10:00:00Z")},
		{"a series that starts beyond the horizon keeps its first recurrence",
			"DTSTART:20260102T100000Z\r\nRRULE:FREQ=WEEKLY\r\n", 1, crawlNow.Add(DefaultHorizon), at("2026-01-02T10:00:00Z")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cal := "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nBEGIN:VEVENT\r\nUID:bounded@test\r\nSUMMARY:Bounded\r\n" + tt.event + "END:VEVENT\r\nEND:VCALENDAR\r\n"
			start := time.Now()
			res, err := Extract(document.Document{URL: "https://cal.example/x.ics", ContentType: "text/calendar", Body: []byte(cal)}, Options{Now: crawlNow})
			if err != nil || len(res.Happenings) != 1 {
				t.Fatalf("%v %+v", err, res)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("took %v", d)
			}
			e := res.Happenings[0]
			if len(e.Instances) != tt.wantInstances || !e.Horizon.Equal(tt.wantHorizon) || !e.Instances[0].Occurrences[0].Start.Equal(tt.wantFirst) {
				t.Errorf("instances %d, horizon %v, first %v; want %d, %v, %v", len(e.Instances), e.Horizon, e.Instances[0].Occurrences[0].Start, tt.wantInstances, tt.wantHorizon, tt.wantFirst)
			}
		})
	}
}

func TestDocumentsThatAreNotEventsAreErrors(t *testing.T) {
	tests := []struct {
		name string
		doc  document.Document
		want error
	}{
		{"a PDF", document.Document{URL: "https://e.example/a.pdf", ContentType: "application/pdf", Body: []byte("%PDF-1.4")}, ErrUnsupported},
		{"a calendar that is not one", document.Document{URL: "https://e.example/a.ics", ContentType: "text/calendar", Body: []byte("BEGIN:VCALENDAR\r\nthis is no content line\r\n")}, ErrBadCalendar},
		{"a calendar whose top is not VCALENDAR", document.Document{URL: "https://e.example/a.ics", ContentType: "text/calendar", Body: []byte("BEGIN:VCARD\r\nEND:VCARD\r\n")}, ErrBadCalendar},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Extract(tt.doc, Options{Now: crawlNow})
			if !errors.Is(err, tt.want) {
				t.Errorf("err = %v, want %v", err, tt.want)
			}
		})
	}
	if _, err := Extract(document.Document{URL: "/relative", ContentType: "text/html"}, Options{}); err == nil {
		t.Error("a relative document URL is an error")
	}
}

func TestACalendarServedAsTextIsRecognisedByItsFirstLine(t *testing.T) {
	body := "\ufeffBEGIN:VCALENDAR\r\nBEGIN:VEVENT\r\nUID:a@b\r\nSUMMARY:Plain\r\nDTSTART;VALUE=DATE:20241101\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"
	res, err := Extract(document.Document{URL: "https://e.example/cal", ContentType: "text/plain", Body: []byte(body)}, Options{Now: crawlNow})
	if err != nil || len(res.Happenings) != 1 {
		t.Fatalf("%v %+v", err, res)
	}
	e := res.Happenings[0]
	// No zone anywhere: UTC, and the all-day event keeps its date there.
	if e.Time.Timezone != "UTC" || !e.Instances[0].Occurrences[0].AllDay || !strings.HasPrefix(e.Time.DisplayText, "Fri 1 Nov 2024") {
		t.Errorf("%+v", e.Time)
	}
}
