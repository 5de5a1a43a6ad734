package http_test

import (
	"context"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/feedsvc/feedsvc/commands"
	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/readmodel/feedback"
	"github.com/feedsvc/feedsvc/testkit/servicetest"
)

// calendar is an event feed holding one event of each kind the queries
// must tell apart, placed relative to the time the test starts.
type calendar struct {
	*eventFeed
	site domain.Attachment
	now  time.Time
	// base is a whole hour one to two hours ahead: the weekly event's
	// third instance, and the origin of the others.
	base time.Time

	oneTime, festival, weekly, allDay, online, later, past, now1h, lateNight domain.HappeningDetails
	ids                                                                      map[string]uuid.UUID
}

func day(n int) time.Duration { return time.Duration(n) * 24 * time.Hour }

func newCalendar(t *testing.T) *calendar {
	t.Helper()
	h := servicetest.Start(t)
	c := &calendar{eventFeed: newEventFeed(t, h, "Concerts"), ids: map[string]uuid.UUID{}}
	c.site = c.attach(t, "site.example")
	c.now = time.Now().UTC()
	c.base = c.now.Truncate(time.Hour).Add(2 * time.Hour)
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	b := c.base

	c.oneTime = oneTime("concert", b.Add(day(2)), 3*time.Hour)
	c.oneTime.ShortDescription = "A concert"
	pub := b.Add(-day(1))
	c.oneTime.PublishedAt = &pub
	total, available := 500, 120
	c.oneTime.Location = &domain.Location{
		Venue:       &domain.Venue{Name: "Philharmonie", Address: "Herbert-von-Karajan-Str. 1, Berlin"},
		Coordinates: &domain.Coordinates{Lat: 52.51, Lng: 13.37}, DisplayAddress: "Philharmonie, Berlin", Locality: "Berlin",
	}
	c.oneTime.Capacity = &domain.Capacity{Total: &total, Available: &available}
	c.oneTime.Organizer = &domain.Organizer{Name: "Berliner Phil", URL: "https://phil.example"}
	c.oneTime.PrimaryImage = "https://site.example/i/1.jpg"
	c.oneTime.SupportingImages = []string{"https://site.example/i/2.jpg"}
	c.oneTime.PrimaryURL = "https://site.example/events/concert"
	c.oneTime.URLs = []string{"https://site.example/events/concert", "https://tickets.example/concert"}
	c.oneTime.GeoLocations = []domain.GeoLocation{
		{Description: "Philharmonie, Berlin", RelationType: domain.GeoLocationPoint, Score: 100},
		{Description: "Berlin", RelationType: domain.GeoRelevanceRange, Score: 80},
	}

	c.festival = event("festival", domain.PatternSingular, instance("0", domain.StatusScheduled,
		span{b.Add(day(5)), 8 * time.Hour}, span{b.Add(day(6)), 8 * time.Hour}, span{b.Add(day(7)), 8 * time.Hour}))
	// Every week from two weeks ago: two instances over, the fifth
	// cancelled, the sixth moved a day, the eighth beyond 30 days.
	c.weekly = weekly("weekly", b.Add(-day(14)), 8, map[int]string{4: domain.StatusCancelled}, map[int]bool{5: true})
	localDay := b.Add(day(10)).In(berlin)
	midnight := time.Date(localDay.Year(), localDay.Month(), localDay.Day(), 0, 0, 0, 0, berlin)
	c.allDay = event("allday", domain.PatternSingular, domain.HappeningInstance{Key: "0", Status: domain.StatusScheduled,
		Occurrences: []domain.Occurrence{{Start: midnight, End: ptr(midnight.AddDate(0, 0, 1)), AllDay: true}}})
	c.online = oneTime("webinar", b.Add(day(3)), 0)
	c.online.Location = &domain.Location{Online: &domain.Online{Platform: "Zoom", URL: "https://zoom.example/j/1"}}
	c.later = oneTime("later", b.Add(day(40)), time.Hour)
	c.past = oneTime("past", b.Add(-day(20)), time.Hour)
	c.now1h = oneTime("now", c.now.Add(-time.Hour), 2*time.Hour)
	// 00:30 to 00:50 in Berlin on a day twelve days ahead: 23:30Z to
	// 23:50Z the day before.
	d12 := b.Add(day(12)).In(berlin)
	c.lateNight = oneTime("latenight", time.Date(d12.Year(), d12.Month(), d12.Day(), 0, 30, 0, 0, berlin), 20*time.Minute)

	for _, d := range []domain.HappeningDetails{c.oneTime, c.festival, c.weekly, c.allDay, c.online, c.later, c.past, c.now1h, c.lateNight} {
		c.ids[d.Identity] = c.add(t, c.site, d)
	}
	return c
}

func ptr[T any](v T) *T { return &v }

func (c *calendar) list(t *testing.T, query string) servicetest.Response {
	t.Helper()
	return c.h.Do("GET", c.items()+query, nil).MustStatus(t, 200)
}

func TestEventItemListsSelectEventsByTheirOccurrences(t *testing.T) {
	t.Parallel()
	c := newCalendar(t)
	defaultOrder := fmtIDs(c.now1h, c.weekly, c.oneTime, c.online, c.festival, c.allDay, c.lateNight)

	t.Run("the default range is the next 30 days, soonest occurrence first, including one under way", func(t *testing.T) {
		r := c.list(t, "")
		if got := eventIDs(t, r); !sameList(got, defaultOrder) {
			t.Fatalf("events %v, want %v", got, defaultOrder)
		}
		if num(r.Data()["total"]) != len(defaultOrder) {
			t.Fatalf("total %v, want %d", r.Data()["total"], len(defaultOrder))
		}
	})

	t.Run("each item counts its occurrences in the range and those still to come", func(t *testing.T) {
		r := c.list(t, "")
		cases := []struct {
			name            string
			event           domain.HappeningDetails
			inRange, coming int
		}{
			{"a one-time event has one", c.oneTime, 1, 1},
			{"a three-day festival has one per day", c.festival, 3, 3},
			{"the weekly event has five in 30 days and five to come (not the cancelled one)", c.weekly, 5, 5},
			{"an event under way is in range but no longer to come", c.now1h, 1, 0},
		}
		for _, tc := range cases {
			block := occurrenceBlock(byEvent(t, r, tc.event))
			entries := block["occurrencesInRange"].([]any)
			if num(block["totalOccurrences"]) != tc.inRange || len(entries) != tc.inRange || num(block["upcomingOccurrences"]) != tc.coming {
				t.Errorf("%s: total %v, %d entries, upcoming %v; want %d in range, %d to come",
					tc.name, block["totalOccurrences"], len(entries), block["upcomingOccurrences"], tc.inRange, tc.coming)
			}
		}
	})

	t.Run("the weekly event shows each instance's status and the next occurrence is the earliest in range", func(t *testing.T) {
		block := occurrenceBlock(byEvent(t, c.list(t, ""), c.weekly))
		var statuses []string
		for _, e := range block["occurrencesInRange"].([]any) {
			statuses = append(statuses, e.(map[string]any)["status"].(string))
		}
		want := []string{"scheduled", "scheduled", "cancelled", "rescheduled", "scheduled"}
		if !sameList(statuses, want) {
			t.Fatalf("statuses %v, want %v", statuses, want)
		}
		next := block["nextOccurrence"].(map[string]any)
		if next["startDateTime"] != stamp(c.base) || next["endDateTime"] != stamp(c.base.Add(2*time.Hour)) {
			t.Fatalf("next occurrence %v, want the one at %s", next, stamp(c.base))
		}
		moved := block["occurrencesInRange"].([]any)[3].(map[string]any)
		if moved["startDateTime"] != stamp(c.base.Add(day(22))) {
			t.Fatalf("the rescheduled instance is at %v, want its new date %s", moved["startDateTime"], stamp(c.base.Add(day(22))))
		}
	})

	t.Run("status filters by instance status, and completed is judged by the clock", func(t *testing.T) {
		weekAgo := url.QueryEscape(rfc(time.Now().Add(-day(7) + time.Minute)))
		cases := []struct {
			name, query string
			want        []string
			occurrences int // of the first item
			status      string
		}{
			{"cancelled", "?status=cancelled", fmtIDs(c.weekly), 1, "cancelled"},
			{"rescheduled", "?status=rescheduled", fmtIDs(c.weekly), 1, "rescheduled"},
			{"postponed matches nothing", "?status=postponed", nil, 0, ""},
			{"completed over the last week", "?status=completed&since=" + weekAgo, fmtIDs(c.weekly), 1, "completed"},
			{"scheduled leaves out the others' instances", "?status=scheduled", defaultOrder, 1, "scheduled"},
		}
		for _, tc := range cases {
			r := c.list(t, tc.query)
			if got := eventIDs(t, r); !sameList(got, tc.want) || num(r.Data()["total"]) != len(tc.want) {
				t.Errorf("%s: events %v total %v, want %v", tc.name, got, r.Data()["total"], tc.want)
				continue
			}
			if len(tc.want) == 0 {
				continue
			}
			block := occurrenceBlock(itemList(t, r)[0])
			if num(block["totalOccurrences"]) != tc.occurrences {
				t.Errorf("%s: %v occurrences, want %d", tc.name, block["totalOccurrences"], tc.occurrences)
			}
			for _, e := range block["occurrencesInRange"].([]any) {
				if e.(map[string]any)["status"] != tc.status {
					t.Errorf("%s: an occurrence of status %v", tc.name, e.(map[string]any)["status"])
				}
			}
		}
		if block := occurrenceBlock(byEvent(t, c.list(t, "?status=scheduled"), c.weekly)); num(block["totalOccurrences"]) != 3 {
			t.Errorf("scheduled: the weekly event has %v scheduled occurrences in range, want 3", block["totalOccurrences"])
		}
	})

	t.Run("a since alone spans 30 days, clamped to the window's end", func(t *testing.T) {
		// since + 30 days would reach the weekly event's eighth instance
		// (day 35) and the later event (day 40); the window ends at day 30.
		r := c.list(t, "?since="+url.QueryEscape(rfc(c.base.Add(day(25)))))
		if got := eventIDs(t, r); !sameList(got, fmtIDs(c.weekly)) {
			t.Fatalf("events %v, want only the weekly one", got)
		}
		if n := num(occurrenceBlock(itemList(t, r)[0])["totalOccurrences"]); n != 1 {
			t.Fatalf("%d weekly occurrences from day 25, want 1 (day 28)", n)
		}
	})

	t.Run("ranges compare instants: 00:30 in Berlin belongs to the previous UTC day", func(t *testing.T) {
		start := c.lateNight.Instances[0].Occurrences[0].Start.UTC()
		prevDay, itsDay := start.Format("2006-01-02"), start.Add(day(1)).Format("2006-01-02")
		if start.Hour() != 23 {
			t.Fatalf("fixture: %v is not 23:xx UTC", start)
		}
		in := c.list(t, "?since="+prevDay+"&until="+itsDay)
		found := false
		for _, id := range eventIDs(t, in) {
			found = found || id == eventIDOf(c.lateNight)
		}
		if !found {
			t.Fatalf("the late-night event at %s is not in [%s, %s)", start, prevDay, itsDay)
		}
		for _, id := range eventIDs(t, c.list(t, "?since="+itsDay+"&until="+start.Add(day(2)).Format("2006-01-02"))) {
			if id == eventIDOf(c.lateNight) {
				t.Fatalf("the late-night event at %s is in the next UTC day's range", start)
			}
		}
	})

	t.Run("orderBy=created is newest added first", func(t *testing.T) {
		got := eventIDs(t, c.list(t, "?orderBy=created"))
		want := fmtIDs(c.lateNight, c.now1h, c.online, c.allDay, c.weekly, c.festival, c.oneTime)
		if !sameList(got, want) {
			t.Fatalf("events %v, want %v", got, want)
		}
	})

	t.Run("pages follow the order and total counts every matching event", func(t *testing.T) {
		for _, tc := range []struct {
			query   string
			want    []string
			hasMore bool
		}{
			{"?limit=2", defaultOrder[:2], true},
			{"?limit=2&offset=2", defaultOrder[2:4], true},
			{"?limit=5&offset=5", defaultOrder[5:], false},
			{"?offset=50", nil, false},
		} {
			r := c.list(t, tc.query)
			p := r.Data()["pagination"].(map[string]any)
			if got := eventIDs(t, r); !sameList(got, tc.want) || num(r.Data()["total"]) != len(defaultOrder) || p["hasMore"] != tc.hasMore {
				t.Errorf("%s: events %v total %v hasMore %v; want %v, %d, %v", tc.query, got, r.Data()["total"], p["hasMore"], tc.want, len(defaultOrder), tc.hasMore)
			}
		}
		if p := c.list(t, "").Data()["pagination"].(map[string]any); num(p["limit"]) != 20 || num(p["offset"]) != 0 {
			t.Errorf("default pagination %v, want limit 20 offset 0", p)
		}
	})

	t.Run("the current shape omits what is absent, never holds null, and always has its arrays", func(t *testing.T) {
		r := c.list(t, "")
		assertNoNull(t, "body", r.Body)
		full := byEvent(t, r, c.oneTime)
		if got := itemKeys(full); got != "addedToFeedAt,capacity,description,eventId,geoLocations,id,location,occurrence,organizer,primaryImage,primaryUrl,publishedAt,shortDescription,supportingImages,time,title,urls" {
			t.Fatalf("a full item has %s", got)
		}
		if full["id"] != c.ids[c.oneTime.Identity].String() || full["publishedAt"] != stamp(*c.oneTime.PublishedAt) {
			t.Fatalf("id %v publishedAt %v", full["id"], full["publishedAt"])
		}
		loc := full["location"].(map[string]any)
		if itemKeys(loc) != "coordinates,displayAddress,venue" || itemKeys(full["capacity"].(map[string]any)) != "available,total,unlimited" {
			t.Fatalf("location %v capacity %v", loc, full["capacity"])
		}
		if geo := full["geoLocations"].([]any); len(geo) != 2 || itemKeys(geo[0].(map[string]any)) != "description,id,relationType,score" {
			t.Fatalf("geoLocations %v", geo)
		}
		bare := byEvent(t, r, c.online)
		if got := itemKeys(bare); got != "addedToFeedAt,description,eventId,geoLocations,id,location,occurrence,supportingImages,time,title,urls" {
			t.Fatalf("a bare item has %s", got)
		}
		if entry := occurrenceBlock(bare)["nextOccurrence"].(map[string]any); itemKeys(entry) != "id,instanceId,startDateTime,status" {
			t.Fatalf("an occurrence without an end has %s", itemKeys(entry))
		}
		if itemKeys(bare["location"].(map[string]any)) != "online" {
			t.Fatalf("an online event's location is %v", bare["location"])
		}
	})

	t.Run("the legacy shape has sourceType at the root, nulls for what is absent, and no source or score", func(t *testing.T) {
		r := c.h.Do("GET", "/v0"+c.items(), nil).MustStatus(t, 200)
		if sameList(eventIDs(t, r), defaultOrder) == false || num(r.Data()["total"]) != len(defaultOrder) {
			t.Fatalf("legacy list %v", eventIDs(t, r))
		}
		bare := byEvent(t, r, c.online)
		want := "addedToFeedAt,capacity,description,eventId,geoLocations,id,location,occurrence,organizer,primaryImage,primaryUrl,publishedAt,shortDescription,sourceType,supportingImages,time,title,urls"
		if got := itemKeys(bare); got != want {
			t.Fatalf("a bare legacy item has %s, want %s", got, want)
		}
		for _, k := range []string{"publishedAt", "shortDescription", "primaryImage", "primaryUrl", "capacity", "organizer"} {
			if bare[k] != nil {
				t.Errorf("%s is %v, want null", k, bare[k])
			}
		}
		if bare["sourceType"] != "site" {
			t.Errorf("sourceType %v", bare["sourceType"])
		}
		if entry := occurrenceBlock(bare)["nextOccurrence"].(map[string]any); entry["endDateTime"] != nil || itemKeys(entry) != "endDateTime,id,instanceId,startDateTime,status" {
			t.Errorf("a legacy occurrence without an end: %v", entry)
		}
		loc := bare["location"].(map[string]any)
		if loc["venue"] != nil || loc["coordinates"] != nil || loc["displayAddress"] != nil || loc["online"] == nil {
			t.Errorf("a legacy online location: %v", loc)
		}
		if full := byEvent(t, r, c.oneTime); full["publishedAt"] != nil || full["shortDescription"] != "A concert" {
			t.Errorf("legacy publishedAt is always null: %v; shortDescription %v", full["publishedAt"], full["shortDescription"])
		}
		far := c.h.Do("GET", "/v0"+c.items()+"?status=postponed", nil).MustStatus(t, 200)
		if len(itemList(t, far)) != 0 {
			t.Errorf("legacy status filter: %s", far.Raw)
		}
	})

	t.Run("include=source adds the source block of where the event was found", func(t *testing.T) {
		it := byEvent(t, c.list(t, "?include=source"), c.oneTime)
		src := it["source"].(map[string]any)
		if src["type"] != "site" || src["url"] != "https://site.example/events/concert" || len(src) != 2 {
			t.Fatalf("source %v", src)
		}
	})

	t.Run("a single item shows every instance and occurrence, with no range", func(t *testing.T) {
		r := c.h.Do("GET", c.items()+"/"+c.ids[c.weekly.Identity].String()+"?include=source", nil).MustStatus(t, 200)
		it := r.Data()
		assertNoNull(t, "item", it)
		block := occurrenceBlock(it)
		var statuses []string
		for _, e := range block["occurrencesInRange"].([]any) {
			statuses = append(statuses, e.(map[string]any)["status"].(string))
		}
		want := []string{"completed", "completed", "scheduled", "scheduled", "cancelled", "rescheduled", "scheduled", "scheduled"}
		if !sameList(statuses, want) || num(block["totalOccurrences"]) != 8 || num(block["upcomingOccurrences"]) != 5 {
			t.Fatalf("statuses %v total %v upcoming %v; want %v, 8, 5", statuses, block["totalOccurrences"], block["upcomingOccurrences"], want)
		}
		if next := block["nextOccurrence"].(map[string]any); next["startDateTime"] != stamp(c.base) {
			t.Fatalf("next occurrence %v, want the first not over (%s)", next, stamp(c.base))
		}
		if it["source"].(map[string]any)["type"] != "site" {
			t.Fatalf("source %v", it["source"])
		}
		if g := c.h.Do("GET", c.items()+"/"+c.ids[c.past.Identity].String(), nil).MustStatus(t, 200).Data(); occurrenceBlock(g)["nextOccurrence"] != nil {
			t.Fatalf("an event that is over has a next occurrence: %v", occurrenceBlock(g))
		}
	})

	t.Run("an all-day event keeps its local day", func(t *testing.T) {
		e := occurrenceBlock(byEvent(t, c.list(t, ""), c.allDay))["occurrencesInRange"].([]any)[0].(map[string]any)
		start := c.allDay.Instances[0].Occurrences[0].Start
		if e["startDateTime"] != stamp(start) || e["endDateTime"] != stamp(start.AddDate(0, 0, 1)) {
			t.Fatalf("all-day occurrence %v, want the Berlin day from %s", e, stamp(start))
		}
	})
}

func stamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

func TestEventItemQueriesAnswer400WithTheFieldAndTheIssue(t *testing.T) {
	t.Parallel()
	h := servicetest.Start(t)
	f := newEventFeed(t, h, "Dates")
	now := time.Now()
	at := func(d time.Duration) string { return url.QueryEscape(rfc(now.Add(d))) }
	cases := []struct {
		name, path, field, issue string
	}{
		{"a since more than 7 days back", "?since=" + at(-day(7)-time.Hour), "since", "must be within 7 days before and 30 days after the current time"},
		{"a since more than 30 days ahead", "?since=" + at(day(30)+time.Hour), "since", "must be within 7 days before and 30 days after the current time"},
		{"an until more than 30 days ahead", "?until=" + at(day(31)), "until", "must be within 7 days before and 30 days after the current time"},
		{"an until more than 7 days back", "?until=" + at(-day(8)), "until", "must be within 7 days before and 30 days after the current time"},
		{"a plain-date since 8 days back", "?since=" + now.Add(-day(8)).UTC().Format("2006-01-02"), "since", "must be within 7 days before and 30 days after the current time"},
		{"an until before since", "?since=" + at(day(2)) + "&until=" + at(day(1)), "until", "must be after since"},
		{"an until equal to since", "?since=" + at(day(2)) + "&until=" + at(day(2)), "until", "must be after since"},
		{"an until in the past with no since", "?until=" + at(-day(1)), "until", "must be after since"},
		{"a since that is no date", "?since=tomorrow", "since", "must be an ISO 8601 date-time or date"},
		{"an impossible date", "?until=2026-13-45", "until", "must be an ISO 8601 date-time or date"},
		{"an unknown status", "?status=done", "status", "must be one of scheduled, cancelled, postponed, rescheduled, completed"},
		{"an unknown order", "?orderBy=title", "orderBy", "must be occurrence, created or relevance"},
		{"a limit of 0", "?limit=0", "limit", "must be between 1 and 100"},
		{"a limit of 101", "?limit=101", "limit", "must be between 1 and 100"},
		{"a negative offset", "?offset=-1", "offset", "must be between 0 and 2147483647"},
		{"a limit that is no number", "?limit=ten", "limit", "must be an integer"},
		{"an unknown include", "?include=author", "include", "names an unknown section; only source is supported"},
		{"a repeated parameter", "?status=cancelled&status=scheduled", "status", "must be given at most once"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := h.Do("GET", f.items()+tc.path, nil).MustStatus(t, 400)
			wantBadRequest(t, r, tc.field, tc.issue)
		})
	}
	t.Run("the legacy list takes no include", func(t *testing.T) {
		wantBadRequest(t, h.Do("GET", "/v0"+f.items()+"?include=source", nil).MustStatus(t, 400), "include", "is not supported on the legacy endpoint")
	})
	t.Run("a single item takes only the source include", func(t *testing.T) {
		r := h.Do("GET", f.items()+"/"+uuid.NewString()+"?include=source,author", nil).MustStatus(t, 400)
		wantBadRequest(t, r, "include", "names an unknown section; only source is supported")
	})
	t.Run("an unknown item is not found in the events dialect", func(t *testing.T) {
		r := h.Do("GET", f.items()+"/"+uuid.NewString(), nil).MustStatus(t, 404)
		if e := r.Body["error"].(map[string]any); e["code"] != "NOT_FOUND" || e["resource"] != nil {
			t.Fatalf("error %v, want NOT_FOUND naming no resource", e)
		}
	})
	t.Run("limits at the bounds of 1 to 100 are accepted", func(t *testing.T) {
		for _, limit := range []int{1, 100} {
			r := h.Do("GET", f.items()+"?limit="+strconv.Itoa(limit)+"&offset=0", nil).MustStatus(t, 200)
			if p := r.Data()["pagination"].(map[string]any); num(p["limit"]) != limit || num(p["offset"]) != 0 {
				t.Errorf("pagination %v, want limit %d offset 0", p, limit)
			}
		}
	})
	t.Run("malformed ids name their path parameter", func(t *testing.T) {
		wantBadRequest(t, h.Do("GET", "/feeds/events/not-a-uuid/items", nil).MustStatus(t, 400), "id", "must be a UUID")
		wantBadRequest(t, h.Do("GET", "/v0/feeds/events/not-a-uuid/items", nil).MustStatus(t, 400), "id", "must be a UUID")
		wantBadRequest(t, h.Do("GET", f.items()+"/123", nil).MustStatus(t, 400), "itemId", "must be a UUID")
		wantBadRequest(t, h.Do("POST", f.items()+"/123/feedback", map[string]any{"rating": "positive"}).MustStatus(t, 400), "itemId", "must be a UUID")
	})
	t.Run("dates at the edges of the window and plain dates are accepted", func(t *testing.T) {
		for _, q := range []string{
			"?since=" + at(-day(7)+time.Minute),
			"?until=" + at(day(30)-time.Minute),
			"?since=" + now.Add(day(1)).UTC().Format("2006-01-02"),
			"?since=" + at(day(29)+23*time.Hour),
		} {
			h.Do("GET", f.items()+q, nil).MustStatus(t, 200)
		}
	})
}

func wantBadRequest(t *testing.T, r servicetest.Response, field, issue string) {
	t.Helper()
	e, _ := r.Body["error"].(map[string]any)
	d, _ := e["details"].(map[string]any)
	if e["code"] != "BAD_REQUEST" || d["field"] != field || d["issue"] != issue {
		t.Fatalf("error %v, want BAD_REQUEST with field %q and issue %q", e, field, issue)
	}
	if strings.Contains(r.Raw, "not-a-uuid") || strings.Contains(r.Raw, "tomorrow") {
		t.Fatalf("the error echoes the request: %s", r.Raw)
	}
}

func TestEventItemsOfOneOrganizationAreNotFoundForAnother(t *testing.T) {
	t.Parallel()
	c := newCalendar(t)
	other := as(c.h, c.h.NewKey("globex"))
	item := c.ids[c.oneTime.Identity].String()
	for _, tc := range []struct{ name, method, path string }{
		{"the list", "GET", c.items()},
		{"the legacy list", "GET", "/v0" + c.items()},
		{"an item", "GET", c.items() + "/" + item},
		{"feedback", "POST", c.items() + "/" + item + "/feedback"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var body any
			if tc.method == "POST" {
				body = map[string]any{"rating": "positive"}
			}
			r := other.do(t, tc.method, tc.path, body).MustStatus(t, 404)
			if e := r.Body["error"].(map[string]any); e["code"] != "NOT_FOUND" || e["resource"] != nil {
				t.Fatalf("error %v: the events dialect names no resource", e)
			}
		})
	}
	t.Run("a news feed's id names no event feed", func(t *testing.T) {
		news := c.h.Do("POST", "/feeds/news", map[string]string{"name": "n", "description": "d"}).MustStatus(t, 201).Data()["id"].(string)
		c.h.Do("GET", "/feeds/events/"+news+"/items", nil).MustStatus(t, 404)
	})
	t.Run("an item of another feed of the same organization is not found", func(t *testing.T) {
		second := newEventFeed(t, c.h, "Other")
		c.h.Do("GET", second.items()+"/"+item, nil).MustStatus(t, 404)
	})
}

func TestFeedbackOnEventItemsFollowsTheNewsRulesInTheEventsDialect(t *testing.T) {
	t.Parallel()
	h := servicetest.Start(t)
	f := newEventFeed(t, h, "Feedback")
	att := f.attach(t, "site.example")
	base := time.Now().Add(day(1)).Truncate(time.Hour)
	item := f.add(t, att, oneTime("rated", base, time.Hour))
	path := f.items() + "/" + item.String() + "/feedback"

	r := h.Do("POST", path, map[string]any{"rating": "positive", "comment": "Great"}).MustStatus(t, 200)
	id, err := uuid.Parse(r.Data()["id"].(string))
	if err != nil {
		t.Fatalf("feedback id %v", r.Data()["id"])
	}
	h.Do("POST", path, map[string]any{"rating": "negative"}).MustStatus(t, 200)
	var kind, rating string
	var eventID uuid.UUID
	if err := h.Service.DB.Bun.NewRaw("SELECT feed_kind, rating, event_id FROM item_feedback WHERE id = ?", id).
		Scan(context.Background(), &kind, &rating, &eventID); err != nil {
		t.Fatal(err)
	}
	if kind != "events" || rating != "positive" || eventID != domain.HappeningID("https://site.example/events/rated") {
		t.Fatalf("stored feedback: kind %s rating %s event %s", kind, rating, eventID)
	}
	counts, err := feedback.NewQueries(h.Service.DB.Bun).Counts(context.Background(), "item", item)
	if err != nil || counts.Positive != 1 || counts.Negative != 1 {
		t.Fatalf("counts %+v %v: feedback is additive", counts, err)
	}

	for _, tc := range []struct {
		name, field, issue string
		body               any
	}{
		{"a missing rating", "rating", "is required", map[string]any{}},
		{"an unknown rating", "rating", "must be one of positive, negative, neutral", map[string]any{"rating": "great"}},
		{"a comment over 5000 characters", "comment", "must be at most 5000 characters", map[string]any{"rating": "neutral", "comment": strings.Repeat("é", 5001)}},
		{"a rating that is no string", "rating", "must be of type string", map[string]any{"rating": 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantBadRequest(t, h.Do("POST", path, tc.body).MustStatus(t, 400), tc.field, tc.issue)
		})
	}
	t.Run("a comment of exactly 5000 characters is accepted", func(t *testing.T) {
		h.Do("POST", path, map[string]any{"rating": "neutral", "comment": strings.Repeat("é", 5000)}).MustStatus(t, 200)
	})
	t.Run("an unknown item is not found", func(t *testing.T) {
		h.Do("POST", f.items()+"/"+uuid.NewString()+"/feedback", map[string]any{"rating": "positive"}).MustStatus(t, 404)
	})
}

func TestRemovingASourceHidesItsEventsAtOnceUnlessAnotherSourceBroughtThem(t *testing.T) {
	t.Parallel()
	h := servicetest.Start(t)
	f := newEventFeed(t, h, "Two sources")
	one, two := f.attach(t, "one.example"), f.attach(t, "two.example")
	base := time.Now().Add(day(1)).Truncate(time.Hour)
	onlyOne := oneTime("only-one", base, time.Hour)
	both := oneTime("both", base.Add(time.Hour), time.Hour)
	onlyOneItem := f.add(t, one, onlyOne)
	bothItem := f.add(t, one, both)
	if again := f.add(t, two, both); again != bothItem {
		t.Fatalf("the event found through a second source is item %s, want %s", again, bothItem)
	}
	if got := eventIDs(t, h.Do("GET", f.items(), nil).MustStatus(t, 200)); !sameList(got, fmtIDs(onlyOne, both)) {
		t.Fatalf("before: %v", got)
	}

	res, err := h.Service.Commands.DetachSource(context.Background(), commands.DetachSource{FeedRef: f.ref(), AttachmentID: one.ID})
	if err != nil {
		t.Fatal(err)
	}
	projected(t, h, res)
	r := h.Do("GET", f.items(), nil).MustStatus(t, 200)
	if got := eventIDs(t, r); !sameList(got, fmtIDs(both)) || num(r.Data()["total"]) != 1 {
		t.Fatalf("after detaching: %v total %v, want only the event the other source found", got, r.Data()["total"])
	}
	if v0 := h.Do("GET", "/v0"+f.items(), nil).MustStatus(t, 200); !sameList(eventIDs(t, v0), fmtIDs(both)) {
		t.Fatalf("legacy after detaching: %v", eventIDs(t, v0))
	}
	h.Do("GET", f.items()+"/"+onlyOneItem.String(), nil).MustStatus(t, 404)
	h.Do("POST", f.items()+"/"+onlyOneItem.String()+"/feedback", map[string]any{"rating": "positive"}).MustStatus(t, 404)
	h.Do("GET", f.items()+"/"+bothItem.String(), nil).MustStatus(t, 200)

	t.Run("found again through a new attachment, the event comes back as newly added with its id", func(t *testing.T) {
		three := f.attach(t, "one.example")
		if again := f.add(t, three, onlyOne); again != onlyOneItem {
			t.Fatalf("item %s, want %s", again, onlyOneItem)
		}
		got := eventIDs(t, h.Do("GET", f.items()+"?orderBy=created", nil).MustStatus(t, 200))
		if !sameList(got, fmtIDs(onlyOne, both)) {
			t.Fatalf("newest first %v, want the returned event first", got)
		}
	})
}

func TestDeletingAnEventFeedDeletesItsItems(t *testing.T) {
	t.Parallel()
	h := servicetest.Start(t)
	f := newEventFeed(t, h, "Doomed")
	att := f.attach(t, "site.example")
	item := f.add(t, att, oneTime("doomed", time.Now().Add(day(1)).Truncate(time.Hour), time.Hour))
	res, err := h.Service.Commands.DeleteFeed(context.Background(), f.ref())
	if err != nil {
		t.Fatal(err)
	}
	projected(t, h, res)
	h.Do("GET", f.items(), nil).MustStatus(t, 404)
	h.Do("GET", f.items()+"/"+item.String(), nil).MustStatus(t, 404)
	for _, table := range []string{"event_items", "event_item_attachments", "event_item_occurrences"} {
		var n int
		if err := h.Service.DB.Bun.NewRaw("SELECT count(*) FROM ? WHERE feed_id = ?", bun.Ident(table), f.id).Scan(context.Background(), &n); err != nil {
			t.Fatal(err)
		}
		if n != 0 {
			t.Errorf("%s keeps %d rows of the deleted feed", table, n)
		}
	}
}

func TestAChangedEventIsReflectedInEveryFeedThatHoldsIt(t *testing.T) {
	t.Parallel()
	h := servicetest.Start(t)
	first, second := newEventFeed(t, h, "First"), newEventFeed(t, h, "Second")
	a1, a2 := first.attach(t, "site.example"), second.attach(t, "site.example")
	base := time.Now().Add(day(1)).Truncate(time.Hour)
	d := oneTime("moving", base, time.Hour)
	first.add(t, a1, d)
	second.add(t, a2, d)

	moved := oneTime("moving", base.Add(day(35)), time.Hour)
	found, res, err := h.Service.Commands.DiscoverHappening(context.Background(), commands.DiscoverHappening{SourceID: a1.SourceID, Details: moved})
	if err != nil || !found.Changed {
		t.Fatalf("rediscovery: %+v %v", found, err)
	}
	projected(t, h, res)
	for _, f := range []*eventFeed{first, second} {
		if got := eventIDs(t, h.Do("GET", f.items(), nil).MustStatus(t, 200)); len(got) != 0 {
			t.Fatalf("feed %s still lists the event at its old date: %v", f.id, got)
		}
		it := h.Do("GET", f.items()+"/"+domain.HappeningItemID(f.id, found.HappeningID).String(), nil).MustStatus(t, 200).Data()
		if s := occurrenceBlock(it)["nextOccurrence"].(map[string]any)["startDateTime"]; s != stamp(base.Add(day(35))) {
			t.Fatalf("feed %s shows the event at %v, want %s", f.id, s, stamp(base.Add(day(35))))
		}
	}
}

func TestAWeeklyEventKeepsItsLocalTimeAcrossADaylightSavingChange(t *testing.T) {
	t.Parallel()
	h := servicetest.Start(t)
	f := newEventFeed(t, h, "DST")
	att := f.attach(t, "site.example")
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	// Tuesdays at 19:00 in Berlin around the end of March 2027, when
	// clocks go forward; the extractor gives local times as instants.
	var instances []domain.HappeningInstance
	for _, d := range []int{23, 30} {
		start := time.Date(2027, 3, d, 19, 0, 0, 0, berlin)
		instances = append(instances, instance(start.Format(time.RFC3339), domain.StatusScheduled, span{start, 2 * time.Hour}))
	}
	item := f.add(t, att, event("dst", domain.PatternRecurring, instances...))
	entries := occurrenceBlock(h.Do("GET", f.items()+"/"+item.String(), nil).MustStatus(t, 200).Data())["occurrencesInRange"].([]any)
	got := []string{entries[0].(map[string]any)["startDateTime"].(string), entries[1].(map[string]any)["startDateTime"].(string)}
	if want := []string{"2027-03-23T18:00:00.000Z", "2027-03-30T17:00:00.000Z"}; !sameList(got, want) {
		t.Fatalf("starts %v, want %v (19:00 CET, then 19:00 CEST)", got, want)
	}
}
