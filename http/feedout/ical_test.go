package feedout_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/emersion/go-ical"
	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/http/feedout"
	"github.com/feedsvc/feedsvc/ingest/calendar"
	"github.com/feedsvc/feedsvc/ingest/document"
)

var berlin = mustZone("Europe/Berlin")

func mustZone(name string) *time.Location {
	loc, err := time.LoadLocation(name)
	if err != nil {
		panic(err)
	}
	return loc
}

// weeklyAcrossTheClockChange is a Tuesday meetup at 19:00 Berlin time
// from 6 October 2026 for six weeks; clocks go back on 25 October, so the
// UTC time moves an hour. The fourth meeting (27 October) is cancelled.
func weeklyAcrossTheClockChange() domain.HappeningDetails {
	d := domain.HappeningDetails{
		Identity: "url:https://meetup.example/go", Title: "Go <b>meetup</b>", Description: "<p>Bring a laptop; we pair, then talk.</p><p>Second line</p>",
		Time:       domain.HappeningTime{TemporalPattern: domain.PatternRecurring, Timezone: "Europe/Berlin"},
		Location:   &domain.Location{Venue: &domain.Venue{Name: "Café Kreuzberg"}, DisplayAddress: "Oranienstraße 7, 10997 Berlin", Coordinates: &domain.Coordinates{Lat: 52.5, Lng: 13.42}},
		PrimaryURL: "https://meetup.example/go", Source: domain.SiteBlock("https://meetup.example/go"),
	}
	for k := range 6 {
		start := time.Date(2026, 10, 6+7*k, 19, 0, 0, 0, berlin)
		end := start.Add(2 * time.Hour)
		status := domain.StatusScheduled
		if k == 3 {
			status = domain.StatusCancelled
		}
		d.Instances = append(d.Instances, domain.HappeningInstance{Key: start.UTC().Format(time.RFC3339), ID: uuid.New(), Status: status,
			Occurrences: []domain.Occurrence{{ID: uuid.New(), Start: start, End: &end}}})
	}
	return d
}

// cancelledTalk is a one-off in UTC, cancelled.
func cancelledTalk() domain.HappeningDetails {
	start := time.Date(2026, 10, 14, 17, 30, 0, 0, time.UTC)
	end := start.Add(90 * time.Minute)
	return domain.HappeningDetails{
		Identity: "url:https://talks.example/1", Title: "A talk, cancelled", Time: domain.HappeningTime{TemporalPattern: domain.PatternSingular, Timezone: "UTC"},
		Instances: []domain.HappeningInstance{{Key: "single", ID: uuid.New(), Status: domain.StatusCancelled,
			Occurrences: []domain.Occurrence{{ID: uuid.New(), Start: start, End: &end}}}},
		Source: domain.SiteBlock("https://talks.example/1"),
	}
}

func render(t *testing.T, events ...domain.HappeningDetails) (feedout.Calendar, []byte) {
	t.Helper()
	cal := feedout.Calendar{FeedID: uuid.New(), Name: "City, events", From: time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC), To: time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)}
	for i, d := range events {
		cal.Events = append(cal.Events, feedout.Happening{ID: domain.HappeningID(d.Identity), Details: d, Instances: d.Instances, Sequence: 3 + i,
			Updated: time.Date(2026, 9, 30, 12, 0, 0, 0, time.UTC)})
	}
	return cal, feedout.ICalendar(cal)
}

func TestTheCalendarParsesInAnIndependentLibraryWithEverythingAnAppNeeds(t *testing.T) {
	meetup, talk := weeklyAcrossTheClockChange(), cancelledTalk()
	_, body := render(t, meetup, talk)
	for i, line := range strings.Split(strings.TrimSuffix(string(body), "\r\n"), "\r\n") {
		if len(line) > 75 {
			t.Fatalf("line %d is %d octets, over the 75 of RFC 5545: %q", i, len(line), line)
		}
	}
	cal, err := ical.NewDecoder(bytes.NewReader(body)).Decode()
	if err != nil {
		t.Fatalf("go-ical cannot read the calendar: %v\n%s", err, body)
	}
	zones := map[string]bool{}
	for _, c := range cal.Children {
		if c.Name == ical.CompTimezone {
			zones[c.Props.Get(ical.PropTimezoneID).Value] = true
			var offsets []string
			for _, o := range c.Children {
				offsets = append(offsets, o.Props.Get(ical.PropTimezoneOffsetTo).Value)
			}
			if got := strings.Join(offsets, " "); got != "+0200 +0100" {
				t.Fatalf("Berlin's VTIMEZONE has offsets %s, want +0200 then +0100 (the change of 25 October)", got)
			}
		}
	}
	if len(zones) != 1 || !zones["Europe/Berlin"] {
		t.Fatalf("VTIMEZONEs %v, want only Europe/Berlin (the talk is in UTC)", zones)
	}
	byUID := map[string][]ical.Event{}
	for _, e := range cal.Events() {
		byUID[e.Props.Get(ical.PropUID).Value] = append(byUID[e.Props.Get(ical.PropUID).Value], e)
	}
	meetupUID, talkUID := domain.HappeningID(meetup.Identity).String(), domain.HappeningID(talk.Identity).String()
	if len(byUID) != 2 || len(byUID[meetupUID]) != 2 || len(byUID[talkUID]) != 1 {
		t.Fatalf("VEVENTs by UID %v: want the meetup's series and its cancelled override, and the talk", byUID)
	}
	series, override := byUID[meetupUID][0], byUID[meetupUID][1]
	checks := []struct {
		name, got, want string
	}{
		{"the series starts in its zone", series.Props.Get(ical.PropDateTimeStart).Value, "20261006T190000"},
		{"with its TZID", series.Props.Get(ical.PropDateTimeStart).Params.Get(ical.ParamTimezoneID), "Europe/Berlin"},
		{"the series is confirmed", series.Props.Get(ical.PropStatus).Value, "CONFIRMED"},
		{"the summary is text", text(series, ical.PropSummary), "Go meetup"},
		{"the description keeps its paragraphs", text(series, ical.PropDescription), "Bring a laptop; we pair, then talk.\nSecond line"},
		{"the location", text(series, ical.PropLocation), "Café Kreuzberg, Oranienstraße 7, 10997 Berlin"},
		{"geo", series.Props.Get(ical.PropGeo).Value, "52.5;13.42"},
		{"url", series.Props.Get(ical.PropURL).Value, "https://meetup.example/go"},
		{"sequence", series.Props.Get(ical.PropSequence).Value, "3"},
		{"the override is the fourth meeting", override.Props.Get(ical.PropRecurrenceID).Value, "20261027T190000"},
		{"cancelled", override.Props.Get(ical.PropStatus).Value, "CANCELLED"},
		{"the talk is in UTC", byUID[talkUID][0].Props.Get(ical.PropDateTimeStart).Value, "20261014T173000Z"},
		{"and cancelled", byUID[talkUID][0].Props.Get(ical.PropStatus).Value, "CANCELLED"},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s: %q, want %q", c.name, c.got, c.want)
		}
	}
	var rdates []string
	for _, p := range series.Props.Values(ical.PropRecurrenceDates) {
		rdates = append(rdates, p.Value)
	}
	if got := strings.Join(rdates, " "); got != "20261013T190000 20261020T190000 20261027T190000 20261103T190000 20261110T190000" {
		t.Fatalf("RDATEs %s", got)
	}
}

func text(e ical.Event, name string) string {
	v, err := e.Props.Text(name)
	if err != nil {
		return "unreadable: " + err.Error()
	}
	return v
}

// instanceSpans are an event's instances as start, end and status, in UTC.
func instanceSpans(d domain.HappeningDetails) []string {
	var out []string
	for _, in := range d.Instances {
		for _, o := range in.Occurrences {
			end := ""
			if o.End != nil {
				end = o.End.UTC().Format(time.RFC3339)
			}
			out = append(out, o.Start.UTC().Format(time.RFC3339)+"/"+end+" "+in.Status)
		}
	}
	return out
}

func TestTheCalendarRoundTripsThroughTheServicesOwnExtractor(t *testing.T) {
	meetup, talk := weeklyAcrossTheClockChange(), cancelledTalk()
	_, body := render(t, meetup, talk)
	res, err := calendar.Extract(document.Document{URL: "https://feedsvc.example/feeds/events/x/calendar.ics", ContentType: "text/calendar", Body: body},
		calendar.Options{Now: time.Date(2026, 10, 8, 0, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Happenings) != 2 || res.Dropped != 0 {
		t.Fatalf("extracted %d events (%d dropped), want 2", len(res.Happenings), res.Dropped)
	}
	for _, want := range []domain.HappeningDetails{meetup, talk} {
		var got *domain.HappeningDetails
		for i, e := range res.Happenings {
			// The event's URL names it in both, as the extractor names events.
			if e.Identity == want.Identity {
				got = &res.Happenings[i]
			}
		}
		if got == nil {
			t.Fatalf("no event with the UID of %s among %d", want.Identity, len(res.Happenings))
		}
		w, g := instanceSpans(want), instanceSpans(*got)
		if strings.Join(g, "\n") != strings.Join(w, "\n") {
			t.Fatalf("%s round-trips to\n%s\nwant\n%s", want.Title, strings.Join(g, "\n"), strings.Join(w, "\n"))
		}
		if got.Time.Timezone != want.Time.Timezone {
			t.Fatalf("%s: zone %q, want %q", want.Title, got.Time.Timezone, want.Time.Timezone)
		}
	}
}
