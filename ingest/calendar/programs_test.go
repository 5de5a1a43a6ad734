package calendar

import (
	"slices"
	"testing"
	"time"

	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/ingest/document"
	"github.com/feedsvc/feedsvc/readmodel/relevance"
)

// The tests of this file read calendars and pages shaped like what real
// programs write in the cases that used to be misread (issue 25).

// instanceKeys are an event's instance keys, in order.
func instanceKeys(e domain.HappeningDetails) []string {
	var keys []string
	for _, in := range e.Instances {
		keys = append(keys, in.Key)
	}
	return keys
}

func icsDoc(body string) document.Document {
	return document.Document{URL: "https://calendar.test/cal.ics", ContentType: "text/calendar; charset=utf-8", Body: []byte(body)}
}

func TestAnExchangeCalendarWithOnlyAVTimezoneReadsItsAllDayDatesInThatZone(t *testing.T) {
	res := extractFixture(t, "exchange-gmt-all-day.ics", "https://outlook.office365.example/owa/calendar/facilities/calendar.ics")
	closed := byTitle(t, res, "Building closed – fire safety inspection")
	openDays := byTitle(t, res, "Half-term open days")
	meeting := byTitle(t, res, "Facilities team meeting")
	checkAll(t, []check{
		{"the all-day event is in the calendar's zone, GMT Standard Time mapped by CLDR", closed.Time.Timezone, "Europe/London"},
		{"18 October starts at midnight in London (BST)", closed.Instances[0].Occurrences[0].Start, at("2024-10-17T23:00:00Z")},
		{"and ends at the next midnight", *closed.Instances[0].Occurrences[0].End, at("2024-10-18T23:00:00Z")},
		{"it is all day", closed.Instances[0].Occurrences[0].AllDay, true},
		{"two days across the end of summer time start at London's midnights",
			[]time.Time{openDays.Instances[0].Occurrences[0].Start, openDays.Instances[0].Occurrences[1].Start},
			[]time.Time{at("2024-10-28T00:00:00Z"), at("2024-10-29T00:00:00Z")}},
		{"the timed event keeps its TZID", meeting.Time.Timezone, "Europe/London"},
		{"10:00 BST is 09:00 UTC", meeting.Instances[0].Occurrences[0].Start, at("2024-10-16T09:00:00Z")},
	})
}

func TestWindowsZoneNamesMapToIANAZonesByTheCLDRTable(t *testing.T) {
	tests := []struct{ windows, iana string }{
		{"GMT Standard Time", "Europe/London"},
		{"W. Europe Standard Time", "Europe/Berlin"},
		{"Eastern Standard Time", "America/New_York"},
		{"Sri Lanka Standard Time", "Asia/Colombo"},
		{"Nepal Standard Time", "Asia/Kathmandu"}, // the CLDR writes Asia/Katmandu, a link to it
		{"India Standard Time", "Asia/Kolkata"},
		{"Aus Central W. Standard Time", "Australia/Eucla"},
		{"Morocco Standard Time", "Africa/Casablanca"},
		{"UTC-11", "Etc/GMT+11"},
	}
	for _, tt := range tests {
		t.Run(tt.windows, func(t *testing.T) {
			loc := resolveTZID(tt.windows, nil)
			if loc == nil || loc.String() != tt.iana {
				t.Errorf("resolveTZID(%q) = %v, want %s", tt.windows, loc, tt.iana)
			}
		})
	}
}

func TestAMovedInstanceNamedByDateTimeReplacesItsDayOfAnAllDaySeries(t *testing.T) {
	res := extractFixture(t, "all-day-series-moved-by-date-time.ics", "https://cloud.verein.example/remote.php/dav/public-calendars/x7Yq2/?export")
	e := byTitle(t, res, "Vereinsheim geöffnet")
	type inst struct{ key, status, start string }
	var got []inst
	for _, in := range e.Instances {
		got = append(got, inst{in.Key, in.Status, in.Occurrences[0].Start.Format(time.RFC3339)})
	}
	// Wednesdays in Berlin; the override names 16 October at midnight in
	// London, which is that Wednesday, and moves it to Thursday.
	want := []inst{
		{"2024-10-01T22:00:00Z", "scheduled", "2024-10-01T22:00:00Z"},
		{"2024-10-08T22:00:00Z", "scheduled", "2024-10-08T22:00:00Z"},
		{"2024-10-15T22:00:00Z", "rescheduled", "2024-10-16T22:00:00Z"},
		{"2024-10-22T22:00:00Z", "scheduled", "2024-10-22T22:00:00Z"},
		{"2024-10-29T23:00:00Z", "scheduled", "2024-10-29T23:00:00Z"},
	}
	if !slices.Equal(got, want) {
		t.Errorf("instances\n got %+v\nwant %+v", got, want)
	}
	if len(e.Instances) == 5 && (e.Instances[2].PreviousStart == nil || !e.Instances[2].PreviousStart.Equal(at("2024-10-15T22:00:00Z"))) {
		t.Errorf("the moved instance's previous start = %v, want its Wednesday", e.Instances[2].PreviousStart)
	}
}

func TestTheUntilDayOfAnAllDaySeriesIsIncluded(t *testing.T) {
	res := extractFixture(t, "all-day-series-until-utc-midnight.ics", "https://outlook.live.example/owa/calendar/library/calendar.ics")
	e := byTitle(t, res, "Book sale")
	// UNTIL=20241028T000000Z names Monday 28 October, although midnight
	// UTC is still the 27th in Chicago.
	want := []string{"2024-10-07T05:00:00Z", "2024-10-14T05:00:00Z", "2024-10-21T05:00:00Z", "2024-10-28T05:00:00Z"}
	if got := instanceKeys(e); !slices.Equal(got, want) {
		t.Errorf("instances\n got %q\nwant %q", got, want)
	}
	checkAll(t, []check{
		{"the rule in words ends on the UNTIL day", e.Time.DisplayText, "Every week on Monday, from Mon 7 Oct 2024, until Mon 28 Oct 2024"},
	})
}

func TestTheUntilDayOfAnAllDaySeriesWrittenAsLocalMidnightInUTC(t *testing.T) {
	// Some programs write UNTIL as the last day's local midnight in UTC:
	// 27 October 23:00 UTC is 28 October in Berlin.
	cal := "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//Test//EN\r\nX-WR-TIMEZONE:Europe/Berlin\r\nBEGIN:VEVENT\r\nUID:until-local@test\r\n" +
		"DTSTAMP:20240901T000000Z\r\nDTSTART;VALUE=DATE:20241007\r\nRRULE:FREQ=WEEKLY;UNTIL=20241027T230000Z\r\nSUMMARY:Flohmarkt\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"
	res, err := Extract(icsDoc(cal), Options{Now: crawlNow})
	if err != nil || len(res.Happenings) != 1 {
		t.Fatalf("Extract: %v, %d events", err, len(res.Happenings))
	}
	want := []string{"2024-10-06T22:00:00Z", "2024-10-13T22:00:00Z", "2024-10-20T22:00:00Z", "2024-10-27T23:00:00Z"}
	if got := instanceKeys(res.Happenings[0]); !slices.Equal(got, want) {
		t.Errorf("instances\n got %q\nwant %q", got, want)
	}
}

func TestAnEventScheduleWithoutAStartDateIsExpandedFromTheWindow(t *testing.T) {
	res := extractFixture(t, "schedule-without-start-date.html", "https://nachbarschaftshaus.example/termine/")
	if res.Dropped != 0 {
		t.Errorf("dropped %d events, want none", res.Dropped)
	}
	repair := byTitle(t, res, "Repair Café")
	// The second Saturday of each month from the window's start (1
	// October 2024) to its end (8 April 2025), 14:00 in Berlin.
	wantRepair := []string{
		"2024-10-12T12:00:00Z", "2024-11-09T13:00:00Z", "2024-12-14T13:00:00Z",
		"2025-01-11T13:00:00Z", "2025-02-08T13:00:00Z", "2025-03-08T13:00:00Z",
	}
	if got := instanceKeys(repair); !slices.Equal(got, wantRepair) {
		t.Errorf("Repair Café instances\n got %q\nwant %q", got, wantRepair)
	}
	stammtisch := byTitle(t, res, "Nachbarschaftsstammtisch")
	// byDay ordinals in iCalendar's form: the second Monday and the last
	// Friday of each month.
	wantStammtisch := []string{
		"2024-10-14T17:30:00Z", "2024-10-25T17:30:00Z", "2024-11-11T18:30:00Z", "2024-11-29T18:30:00Z",
		"2024-12-09T18:30:00Z", "2024-12-27T18:30:00Z", "2025-01-13T18:30:00Z", "2025-01-31T18:30:00Z",
		"2025-02-10T18:30:00Z", "2025-02-28T18:30:00Z", "2025-03-10T18:30:00Z", "2025-03-28T18:30:00Z",
	}
	if got := instanceKeys(stammtisch); !slices.Equal(got, wantStammtisch) {
		t.Errorf("Stammtisch instances\n got %q\nwant %q", got, wantStammtisch)
	}
	if len(stammtisch.Instances) > 0 {
		checkAll(t, []check{{"a duration gives the end", *stammtisch.Instances[0].Occurrences[0].End, at("2024-10-14T19:30:00Z")}})
	}
	checkAll(t, []check{
		{"recurring", repair.Time.TemporalPattern, domain.PatternRecurring},
		{"the rule in words names no start it was not given", repair.Time.DisplayText, "Every month on 2nd Saturday, 14:00–17:00 (Europe/Berlin)"},
		{"ordinals in words", stammtisch.Time.DisplayText, "Every month on 2nd Monday and last Friday, 19:30–21:30 (Europe/Berlin)"},
	})
}

func TestAnEventWithAnAddressTheGazetteerKnowsRanksByThatPlacesDistance(t *testing.T) {
	res := extractFixture(t, "address-without-coordinates.html", "https://choirs.example/events/")
	feed, err := domain.ParseFeedConfig([]byte(`{"geo":{"lat":52.52,"lng":13.405,"radiusKm":30}}`))
	if err != nil {
		t.Fatal(err)
	}
	score := func(title string) float64 {
		s, ok := relevance.Score(byTitle(t, res, title), feed)
		if !ok {
			t.Fatalf("%s: no score", title)
		}
		return s
	}
	berlin := byTitle(t, res, "Open rehearsal: winter songs")
	if s := score("Open rehearsal: winter songs"); s < 95 {
		t.Errorf("an event in Berlin scores %v against a Berlin feed, want about 100", s)
	}
	// Potsdam's centre is about 27 km from Berlin's.
	if s := score("Sing-along in the orangery"); s < 50 || s > 60 {
		t.Errorf("an event in Potsdam scores %v, want 50-60 (27 km of 30)", s)
	}
	if s := score("Harbour carols"); s != 0 {
		t.Errorf("an event in Hamburg scores %v, want 0", s)
	}
	if s := score("Choir leaders' call"); s != 0 {
		t.Errorf("an online event scores %v, want 0", s)
	}
	checkAll(t, []check{
		{"the place's coordinates are not shown as the event's own", berlin.Location.Coordinates, (*domain.Coordinates)(nil)},
		{"they are kept apart as approximate", berlin.Location.ApproximateCoordinates, &domain.Coordinates{Lat: 52.5244, Lng: 13.4105}},
		{"geoLocations mark them approximate: the place is a region, the point has no coordinates' score", berlin.GeoLocations, []domain.GeoLocation{
			{Description: "Hall foyer, Berlin, Germany", RelationType: domain.GeoLocationPoint, Score: scorePointVenue},
			{Description: "Berlin", RelationType: domain.GeoRelevanceRange, Score: scoreLocality},
			{Description: "Germany", RelationType: domain.GeoRelevanceRange, Score: scoreCountry},
		}},
	})
}
