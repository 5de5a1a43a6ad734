package calendar

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/feedsvc/feedsvc/domain"
)

func TestAWordPressEventsCalendarPageGivesItsEventFieldByField(t *testing.T) {
	res := extractFixture(t, "tec-jazz-night.html", "https://jazzkeller.example/event/jazz-night/")
	if len(res.Happenings) != 1 || res.Dropped != 0 {
		t.Fatalf("events %d, dropped %d; want 1, 0", len(res.Happenings), res.Dropped)
	}
	e := res.Happenings[0]
	end := at("2024-11-12T22:00:00Z")
	checkAll(t, []check{
		{"the identity is the event's own URL, normalised", e.Identity, "url:https://jazzkeller.example/event/jazz-night"},
		{"the title has its entities decoded", e.Title, "Jazz Night – Live im Keller"},
		{"the entity-encoded description is decoded and sanitised, its script dropped", e.Description, "<p>Swing &amp; Bebop mit dem Trio Blau. <strong>Eintritt frei</strong></p>"},
		{"a short description needs no summary", e.ShortDescription, ""},
		{"the pattern is singular", e.Time.TemporalPattern, domain.PatternSingular},
		{"the zone comes from the city in the address", e.Time.Timezone, "Europe/Berlin"},
		{"the display text is local", e.Time.DisplayText, "Tue 12 Nov 2024, 20:00–23:00 (Europe/Berlin)"},
		{"a one-off event has one instance", len(e.Instances), 1},
		{"its key survives a new date", e.Instances[0].Key, "single"},
		{"its status is scheduled", e.Instances[0].Status, domain.StatusScheduled},
		{"it has one occurrence", len(e.Instances[0].Occurrences), 1},
		{"20:00 CET is 19:00 UTC", e.Instances[0].Occurrences[0].Start, at("2024-11-12T19:00:00Z")},
		{"23:00 CET is 22:00 UTC", *e.Instances[0].Occurrences[0].End, end},
		{"no horizon for a one-off event", e.Horizon, (*time.Time)(nil)},
		{"the venue is named", e.Location.Venue.Name, "Jazzkeller"},
		{"the venue's address is street and town", e.Location.Venue.Address, "Hauptstraße 12, 10115 Berlin"},
		{"the display address has every part once, the country in English", e.Location.DisplayAddress, "Jazzkeller, Hauptstraße 12, 10115 Berlin, Germany"},
		{"the locality", e.Location.Locality, "Berlin"},
		{"the country in English", e.Location.Country, "Germany"},
		{"no coordinates were given", e.Location.Coordinates, (*domain.Coordinates)(nil)},
		{"the organiser", *e.Organizer, domain.Organizer{Name: "Berliner Jazzfreunde e.V.", URL: "https://jazzfreunde.example/", Contact: "info@jazzfreunde.example"}},
		{"the image", e.PrimaryImage, "https://jazzkeller.example/wp-content/uploads/2024/10/trio-blau.jpg"},
		{"no more images", e.SupportingImages, []string{}},
		{"the primary URL is the event's URL as given", e.PrimaryURL, "https://jazzkeller.example/event/jazz-night/"},
		{"the URLs hold it once (the offer's URL is the same page)", e.URLs, []string{"https://jazzkeller.example/event/jazz-night/"}},
		{"no capacity was stated", e.Capacity, (*domain.Capacity)(nil)},
		{"the source is the page", e.Source, domain.SiteBlock("https://jazzkeller.example/event/jazz-night/")},
		{"the geography: the place, its city (a region equal to the city once) and its country", e.GeoLocations, []domain.GeoLocation{
			{Description: "Jazzkeller, Hauptstraße 12, 10115 Berlin, Germany", RelationType: domain.GeoLocationPoint, Score: 90},
			{Description: "Berlin", RelationType: domain.GeoRelevanceRange, Score: 80},
			{Description: "Germany", RelationType: domain.GeoRelevanceRange, Score: 30},
		}},
		{"the calendars it links to: the site's feed, the event's export, a webcal subscription (the same feed) and an .ics download", res.Calendars, []string{
			"https://jazzkeller.example/events/?ical=1",
			"https://jazzkeller.example/event/jazz-night/?ical=1",
			"https://jazzkeller.example/downloads/programm-2024.ics",
		}},
	})
}

func TestATicketingGraphResolvesReferencesCapacitiesAndStatuses(t *testing.T) {
	res := extractFixture(t, "ticketing-graph.html", "https://tickets.example/konzerthaus")
	if len(res.Happenings) != 4 {
		t.Fatalf("got %d events, want 4", len(res.Happenings))
	}
	prev := at("2024-11-16T18:30:00Z")
	tests := []struct {
		title        string
		identity     string
		status       string
		previous     *time.Time
		start        time.Time
		occurrences  int
		capacity     *domain.Capacity
		primaryImage string
		urls         []string
	}{
		{"Beethoven: Symphonie Nr. 9", "url:https://tickets.example/e/4711", domain.StatusScheduled, nil, at("2024-12-31T17:00:00Z"), 1,
			&domain.Capacity{Total: ptr(1500), Available: ptr(0)}, "https://cdn.tickets.example/4711-16x9.jpg",
			[]string{"https://tickets.example/e/4711?utm_source=newsletter", "https://tickets.example/e/4711/buy"}},
		{"Der zerbrochne Krug", "url:https://tickets.example/e/4712", domain.StatusRescheduled, &prev, at("2025-01-18T18:30:00Z"), 1,
			&domain.Capacity{Total: ptr(800)}, "", []string{"https://tickets.example/e/4712"}},
		{"Hallenmasters 2024", "url:https://tickets.example/e/4713", domain.StatusCancelled, nil, at("2024-12-28T13:00:00Z"), 1, nil, "", []string{"https://tickets.example/e/4713"}},
		// 22:00 to 01:30 is one night out, not two days.
		{"Silvester-Gala", "url:https://tickets.example/e/4714", domain.StatusPostponed, nil, at("2024-12-31T21:00:00Z"), 1, nil, "", []string{"https://tickets.example/e/4714"}},
	}
	for _, tt := range tests {
		t.Run(tt.title, func(t *testing.T) {
			e := byTitle(t, res, tt.title)
			in := e.Instances[0]
			checkAll(t, []check{
				{"identity", e.Identity, tt.identity},
				{"status", in.Status, tt.status},
				{"previous start", in.PreviousStart, tt.previous},
				{"start", in.Occurrences[0].Start, tt.start},
				{"occurrences", len(in.Occurrences), tt.occurrences},
				{"capacity", e.Capacity, tt.capacity},
				{"primary image", e.PrimaryImage, tt.primaryImage},
				{"urls", e.URLs, tt.urls},
				{"venue from the referenced Place", e.Location.Venue.Name, "Konzerthaus Dortmund"},
				{"coordinates from the referenced GeoCoordinates, given as strings", *e.Location.Coordinates, domain.Coordinates{Lat: 51.5157, Lng: 7.4632}},
				{"a country given as a Country object", e.Location.Country, "Germany"},
				{"the region is a relevance region of its own", slices.ContainsFunc(e.GeoLocations, func(g domain.GeoLocation) bool {
					return g.Description == "Nordrhein-Westfalen" && g.RelationType == domain.GeoRelevanceRange && g.Score == 50
				}), true},
				{"a place with coordinates scores 100", e.GeoLocations[0].Score, 100},
			})
		})
	}
	if e := byTitle(t, res, "Beethoven: Symphonie Nr. 9"); e.Organizer == nil || e.Organizer.Contact != "kasse@konzerthaus.example" {
		t.Errorf("the organiser referenced by @id is %+v", e.Organizer)
	}
	if e := byTitle(t, res, "Beethoven: Symphonie Nr. 9"); !slices.Equal(e.SupportingImages, []string{"https://cdn.tickets.example/4711-1x1.jpg"}) {
		t.Errorf("supporting images %v", e.SupportingImages)
	}
}

func TestAnOnlineEventHasItsPlatformAndNoPlace(t *testing.T) {
	res := extractFixture(t, "meetup-online.html", "https://meetup.example/online-gophers/events/302112233/")
	e := byTitle(t, res, "Go Night: Generics in Practice")
	checkAll(t, []check{
		{"the online place names the platform by its host", *e.Location.Online, domain.Online{Platform: "Zoom", URL: "https://us02web.zoom.us/j/81234567890"}},
		{"no venue", e.Location.Venue, (*domain.Venue)(nil)},
		{"no address", e.Location.DisplayAddress, ""},
		{"no geography for an online event", e.GeoLocations, []domain.GeoLocation{}},
		{"without a place the zone is the offset the time was written with", e.Time.Timezone, "Etc/GMT+5"},
		{"18:30 at UTC-5 is 23:30 UTC", e.Instances[0].Occurrences[0].Start, at("2024-11-20T23:30:00Z")},
		{"a plain-text description keeps its line breaks", e.Description, "Join us online for talks about Go generics.<br><br>Agenda:<br>- 18:30 welcome<br>- 18:40 talks"},
		{"the organiser", e.Organizer.Name, "Online Gophers"},
	})
}

func TestAVenuePageWithMicrodataOnly(t *testing.T) {
	res := extractFixture(t, "venue-microdata.html", "https://theater-gasse.example/spielplan")
	e := byTitle(t, res, "Der Besuch der alten Dame")
	checkAll(t, []check{
		{"the event's own URL, resolved against the page", e.PrimaryURL, "https://theater-gasse.example/spielplan/alte-dame"},
		{"the identity is that URL", e.Identity, "url:https://theater-gasse.example/spielplan/alte-dame"},
		{"the zone is found from the coordinates", e.Time.Timezone, "Europe/Vienna"},
		{"a time without offset is local to the event: 19:30 in Vienna", e.Instances[0].Occurrences[0].Start, at("2024-12-05T18:30:00Z")},
		{"the end too", *e.Instances[0].Occurrences[0].End, at("2024-12-05T21:00:00Z")},
		{"the text of the description is escaped", e.Description, "Tragische Komödie von Friedrich Dürrenmatt. Regie: A. Muster &amp; B. Beispiel."},
		{"the image resolved", e.PrimaryImage, "https://theater-gasse.example/bilder/alte-dame.jpg"},
		{"the offer's URL is among the URLs", e.URLs, []string{"https://theater-gasse.example/spielplan/alte-dame", "https://theater-gasse.example/karten/alte-dame"}},
		{"the nested place, address and coordinates", *e.Location, domain.Location{
			Venue:          &domain.Venue{Name: "Theater an der Gasse", Address: "Gassengasse 3, 1010 Wien"},
			Coordinates:    &domain.Coordinates{Lat: 48.2082, Lng: 16.3738},
			DisplayAddress: "Theater an der Gasse, Gassengasse 3, 1010 Wien, Austria",
			Locality:       "Wien", Region: "Vienna", Country: "Austria",
		}},
	})
}

func TestMalformedJSONLDNeverStopsTheRest(t *testing.T) {
	tests := []struct {
		name        string
		file        string
		wantTitles  []string
		wantDropped int
	}{
		{"a broken block beside a good one: the good one is read, events without a title or a date are dropped",
			"malformed.html", []string{"Licht und Schatten – Fotografien 1920–1960"}, 2},
		{"a page whose only JSON-LD is broken falls back to its Microdata",
			"malformed-with-microdata.html", []string{"Lesung: Neue Lyrik"}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := extractFixture(t, tt.file, "https://kultur.example/kalender")
			var titles []string
			for _, e := range res.Happenings {
				titles = append(titles, e.Title)
			}
			if !slices.Equal(titles, tt.wantTitles) || res.Dropped != tt.wantDropped {
				t.Errorf("titles %q dropped %d; want %q, %d", titles, res.Dropped, tt.wantTitles, tt.wantDropped)
			}
		})
	}
}

func TestALongExhibitionIsOngoingWithOneOccurrencePerDay(t *testing.T) {
	res := extractFixture(t, "malformed.html", "https://kultur.example/kalender")
	e := byTitle(t, res, "Licht und Schatten – Fotografien 1920–1960")
	occ := e.Instances[0].Occurrences
	checkAll(t, []check{
		{"more than 14 days is ongoing", e.Time.TemporalPattern, domain.PatternOngoing},
		{"14 Sep 2024 to 12 Jan 2025 inclusive is 121 days", len(occ), 121},
		{"the first day starts at local midnight (summer time)", occ[0].Start, at("2024-09-13T22:00:00Z")},
		{"the last day starts at local midnight (winter time)", occ[len(occ)-1].Start, at("2025-01-11T23:00:00Z")},
		{"the last day ends at the next local midnight", *occ[len(occ)-1].End, at("2025-01-12T23:00:00Z")},
		{"the day of the clock change is 25 hours long", occ[43].End.Sub(occ[43].Start), 25 * time.Hour},
		{"every day is all day", occ[60].AllDay, true},
		{"an address given as text is read into its parts", [2]string{e.Location.Venue.Name, e.Location.Locality}, [2]string{"Stadtmuseum", "Leipzig"}},
		{"the display text names the first and last day", e.Time.DisplayText, "Sat 14 Sep 2024 – Sun 12 Jan 2025"},
	})
}

func TestAFestivalAndItsSubEvents(t *testing.T) {
	res := extractFixture(t, "festival.html", "https://sommerklang.example/")
	festival := byTitle(t, res, "Sommerklang Festival 2024")
	opening := byTitle(t, res, "Opening Night: Die Seebühne")
	days := festival.Instances[0].Occurrences
	checkAll(t, []check{
		{"a Festival is an event: one instance", len(festival.Instances), 1},
		{"7 to 9 June inclusive is three all-day occurrences", len(days), 3},
		{"each is a local day of Leipzig", [3]time.Time{days[0].Start, *days[0].End, days[2].Start}, [3]time.Time{at("2024-06-06T22:00:00Z"), at("2024-06-07T22:00:00Z"), at("2024-06-08T22:00:00Z")}},
		{"all day", days[1].AllDay, true},
		{"a short multi-day event is singular", festival.Time.TemporalPattern, domain.PatternSingular},
		{"the display text", festival.Time.DisplayText, "Fri 7 Jun 2024 – Sun 9 Jun 2024"},
		{"the sub-event takes the festival's place", opening.Location.Venue.Name, "Festivalgelände am See"},
		{"and its organiser", opening.Organizer.Name, "Sommerklang gGmbH"},
		{"a night ending at 00:30 is one occurrence", len(opening.Instances[0].Occurrences), 1},
		{"the sub-event is an event of its own", opening.Identity, "url:https://sommerklang.example/programm/opening"},
	})
}

func TestAnEventScheduleRecursInTheEventsZone(t *testing.T) {
	res := extractFixture(t, "yoga-schedule.html", "https://yoga.example/kurse/dienstag")
	e := byTitle(t, res, "Yoga am Dienstagabend")
	var keys []string
	for _, in := range e.Instances {
		keys = append(keys, in.Key)
	}
	want := []string{
		"2024-10-01T17:00:00Z", "2024-10-08T17:00:00Z", // 15 October is excepted
		"2024-10-22T17:00:00Z", "2024-10-29T18:00:00Z", // clocks went back on 27 October: still 19:00 local
		"2024-11-05T18:00:00Z", "2024-11-12T18:00:00Z", "2024-11-19T18:00:00Z", "2024-11-26T18:00:00Z",
		"2024-12-03T18:00:00Z", "2024-12-10T18:00:00Z", "2024-12-17T18:00:00Z", // endDate is inclusive
	}
	if !slices.Equal(keys, want) {
		t.Errorf("instance keys\n got %q\nwant %q", keys, want)
	}
	checkAll(t, []check{
		{"recurring", e.Time.TemporalPattern, domain.PatternRecurring},
		{"the zone the schedule names", e.Time.Timezone, "Europe/Berlin"},
		{"the display text says the rule", e.Time.DisplayText, "Every week on Tuesday, 19:00–20:30 (Europe/Berlin), from Tue 1 Oct 2024, until Tue 17 Dec 2024"},
		{"each lasts from startTime to endTime", *e.Instances[3].Occurrences[0].End, at("2024-10-29T19:30:00Z")},
		{"the horizon is now + 180 days", *e.Horizon, crawlNow.Add(DefaultHorizon)},
	})
}

func TestEventsOfAListingAreToldApartOrMerged(t *testing.T) {
	res := extractFixture(t, "listing.html", "https://kino.example/programm")
	var ids []string
	for _, e := range res.Happenings {
		ids = append(ids, e.Identity)
	}
	wantIDs := []string{
		// Two films point at the listing: each is told apart by its name.
		"url:https://kino.example/programm#metropolis 1927",
		"url:https://kino.example/programm#nosferatu",
		// Three dates of one play are one event.
		"url:https://kino.example/hamlet",
	}
	if !slices.Equal(ids, wantIDs) {
		t.Fatalf("identities\n got %q\nwant %q", ids, wantIDs)
	}
	hamlet := byTitle(t, res, "Hamlet")
	type inst struct{ key, status string }
	var got []inst
	for _, in := range hamlet.Instances {
		got = append(got, inst{in.Key, in.Status})
	}
	want := []inst{{"2024-10-26T17:30:00Z", "scheduled"}, {"2024-11-02T18:30:00Z", "scheduled"}, {"2024-11-09T18:30:00Z", "cancelled"}}
	if !slices.Equal(got, want) {
		t.Errorf("instances %v, want %v", got, want)
	}
	if hamlet.Time.TemporalPattern != domain.PatternRecurring || hamlet.Time.DisplayText != "3 dates, Sat 26 Oct 2024 – Sat 9 Nov 2024" {
		t.Errorf("time block %+v", hamlet.Time)
	}
}

func TestCalendarLinks(t *testing.T) {
	page := `<html><head><link rel="alternate" type="text/calendar" href="/feed.php"></head><body>
		<a href="webcal://cal.example/club.ics">Subscribe</a>
		<a href="WEBCAL://cal.example/other">Subscribe too</a>
		<a href="/events/export.ICS#top">Download</a>
		<a href="/events/?ical=1&tribe-bar-date=2024-10">Export</a>
		<a href="/events/list.pdf">PDF</a>
		<a href="mailto:someone@example.org">Mail</a>
		<a href="/events/export.ics">Again</a></body></html>`
	res, err := Extract(htmlDoc("https://club.example/events/", page), Options{Now: crawlNow})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"https://club.example/feed.php",
		"https://cal.example/club.ics",
		"https://cal.example/other",
		"https://club.example/events/export.ICS",
		"https://club.example/events/?ical=1&tribe-bar-date=2024-10",
		"https://club.example/events/export.ics",
	}
	if !slices.Equal(res.Calendars, want) {
		t.Errorf("calendars\n got %q\nwant %q", res.Calendars, want)
	}
}

func TestEveryEventTypeIsAnEvent(t *testing.T) {
	tests := []struct {
		typ  string
		want bool
	}{
		{"Event", true}, {"MusicEvent", true}, {"TheaterEvent", true}, {"SportsEvent", true},
		{"EducationEvent", true}, {"https://schema.org/ComedyEvent", true}, {"Festival", true},
		{"CourseInstance", true}, {"Place", false}, {"EventSeries", false}, {"Organization", false},
	}
	for _, tt := range tests {
		t.Run(tt.typ, func(t *testing.T) {
			if got := isEventType(tt.typ); got != tt.want {
				t.Errorf("isEventType(%q) = %v", tt.typ, got)
			}
		})
	}
	if !isEventType([]any{"Thing", "DanceEvent"}) {
		t.Error("a list of types with an event type is an event")
	}
}

func TestTitlesAndDescriptionsAreSanitised(t *testing.T) {
	page := `<script type="application/ld+json">{"@type":"Event","name":"<b>Rock</b> 'n' Roll <script>x()<\/script>",
		"description":"<p onclick=\"x()\">Hi <a href=\"javascript:alert(1)\">there</a> <img src=x onerror=y()> <iframe src=\"https://evil.example\"></iframe></p>",
		"startDate":"2024-11-01T20:00:00+01:00"}</script>`
	res, err := Extract(htmlDoc("https://club.example/rock", page), Options{Now: crawlNow})
	if err != nil || len(res.Happenings) != 1 {
		t.Fatalf("%v, %+v", err, res)
	}
	e := res.Happenings[0]
	if e.Title != "Rock 'n' Roll" {
		t.Errorf("title %q", e.Title)
	}
	for _, bad := range []string{"onclick", "javascript:", "onerror", "<iframe", "<script"} {
		if strings.Contains(e.Description, bad) {
			t.Errorf("description keeps %q: %s", bad, e.Description)
		}
	}
	if !strings.Contains(e.Description, "<p>Hi ") {
		t.Errorf("description lost its markup: %s", e.Description)
	}
}

func TestALongDescriptionGetsAPlainShortOne(t *testing.T) {
	long := strings.Repeat("Ein langer Abend voller Musik &amp; Tanz. ", 10)
	page := `<script type="application/ld+json">{"@type":"Event","name":"Tanzabend","description":"<p>` + long + `</p>","startDate":"2024-11-01T20:00:00+01:00"}</script>`
	res, err := Extract(htmlDoc("https://club.example/tanz", page), Options{Now: crawlNow})
	if err != nil || len(res.Happenings) != 1 {
		t.Fatalf("%v, %+v", err, res)
	}
	short := res.Happenings[0].ShortDescription
	if !strings.HasPrefix(short, "Ein langer Abend voller Musik &amp; Tanz. Ein") || !strings.HasSuffix(short, "…") || strings.Contains(short, "<p>") {
		t.Errorf("short description %q", short)
	}
}

func TestHybridAndMovedOnlineEventsAndSuperEvents(t *testing.T) {
	page := `<script type="application/ld+json">{"@context":"https://schema.org","@graph":[
		{"@type":"Festival","@id":"#fest","name":"Lichtwoche","startDate":"2024-11-04","endDate":"2024-11-10",
		 "location":{"@type":"Place","name":"Altstadt","address":{"@type":"PostalAddress","addressLocality":"Leipzig","addressCountry":"DE"}}},
		{"@type":"EducationEvent","name":"Workshop Lichtdesign","url":"/workshop","superEvent":{"@id":"#fest"},
		 "startDate":"2024-11-05T10:00:00+01:00","endDate":"2024-11-05T16:00:00+01:00",
		 "eventAttendanceMode":"https://schema.org/MixedEventAttendanceMode",
		 "location":[{"@type":"Place","name":"Werkstatt 3","address":"Karl-Liebknecht-Straße 12, Leipzig"},{"@type":"VirtualLocation","url":"https://meet.google.com/abc-defg-hij"}]},
		{"@type":"Event","name":"Podium","url":"https://podium.example/2024","startDate":"2024-11-06T18:00:00+01:00",
		 "eventStatus":"https://schema.org/EventMovedOnline","superEvent":{"@id":"#fest"}}]}</script>`
	res, err := Extract(htmlDoc("https://lichtwoche.example/programm/", page), Options{Now: crawlNow})
	if err != nil {
		t.Fatal(err)
	}
	workshop := byTitle(t, res, "Workshop Lichtdesign")
	podium := byTitle(t, res, "Podium")
	fest := byTitle(t, res, "Lichtwoche")
	checkAll(t, []check{
		{"a hybrid event has its venue", workshop.Location.Venue.Name, "Werkstatt 3"},
		{"and its online place", *workshop.Location.Online, domain.Online{Platform: "Google Meet", URL: "https://meet.google.com/abc-defg-hij"}},
		{"an address given as text is the venue's street and town", workshop.Location.Venue.Address, "Karl-Liebknecht-Straße 12, Leipzig"},
		{"its relative URL is resolved", workshop.PrimaryURL, "https://lichtwoche.example/workshop"},
		{"an event moved online is still scheduled", podium.Instances[0].Status, domain.StatusScheduled},
		{"and happens at its own URL", *podium.Location.Online, domain.Online{Platform: "podium.example", URL: "https://podium.example/2024"}},
		{"it keeps the place of the festival it belongs to", podium.Location.Locality, "Leipzig"},
		{"a week-long festival is singular, with a day each", [2]any{fest.Time.TemporalPattern, len(fest.Instances[0].Occurrences)}, [2]any{domain.PatternSingular, 7}},
	})
}
