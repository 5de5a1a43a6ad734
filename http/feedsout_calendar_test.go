package http_test

import (
	"bytes"
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/emersion/go-ical"

	"github.com/feedsvc/feedsvc/commands"
	"github.com/feedsvc/feedsvc/domain"
	extract "github.com/feedsvc/feedsvc/ingest/calendar"
	"github.com/feedsvc/feedsvc/ingest/document"
	"github.com/feedsvc/feedsvc/testkit/servicetest"
)

// calendarSpans are an event's occurrences as start, end and status.
func calendarSpans(d domain.HappeningDetails) []string {
	var out []string
	for _, in := range d.Instances {
		for _, o := range in.Occurrences {
			status := in.Status
			if status == domain.StatusRescheduled {
				status = domain.StatusScheduled
			}
			out = append(out, o.Start.UTC().Format(time.RFC3339)+"/"+o.End.UTC().Format(time.RFC3339)+" "+status)
		}
	}
	return out
}

func TestAnEventFeedsCalendarParsesAndRoundTripsThroughTheExtractor(t *testing.T) {
	t.Parallel()
	f := newEventFeed(t, servicetest.Start(t), "City events")
	att := f.attach(t, "site.example")
	berlin, _ := time.LoadLocation("Europe/Berlin")
	y, m, d := domain.Now().In(berlin).AddDate(0, 0, 1).Date()
	meetup := weekly("meetup", time.Date(y, m, d, 18, 0, 0, 0, berlin), 4, map[int]string{2: domain.StatusCancelled}, nil)
	meetup.Location = &domain.Location{DisplayAddress: "Oranienstraße 7, Berlin", Coordinates: &domain.Coordinates{Lat: 52.5, Lng: 13.42}}
	once := oneTime("talk", time.Date(y, m, d, 9, 30, 0, 0, berlin).AddDate(0, 0, 2), time.Hour)
	f.add(t, att, meetup)
	f.add(t, att, once)
	path := "/feeds/events/" + f.id.String() + "/calendar.ics"

	o := fetch(t, f.h, path, nil).must(t, 200)
	if ct := o.header.Get("Content-Type"); ct != "text/calendar; charset=utf-8" {
		t.Fatalf("Content-Type %q", ct)
	}
	cal, err := ical.NewDecoder(bytes.NewReader(o.body)).Decode()
	if err != nil {
		t.Fatalf("go-ical cannot read it: %v\n%s", err, o.body)
	}
	uids := map[string]int{}
	for _, e := range cal.Events() {
		uids[e.Props.Get(ical.PropUID).Value]++
	}
	if len(uids) != 2 || uids[eventIDOf(meetup)] != 2 || uids[eventIDOf(once)] != 1 {
		t.Fatalf("VEVENTs per UID %v, want the meetup's series and its cancelled instance, and the talk, by event id", uids)
	}

	t.Run("the extractor reads back every occurrence and the cancellation", func(t *testing.T) {
		res, err := extract.Extract(document.Document{URL: "https://feedsvc.example" + path, ContentType: "text/calendar", Body: o.body},
			extract.Options{Now: domain.Now()})
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for _, e := range res.Happenings {
			got[e.Title] = strings.Join(calendarSpans(e), "\n")
		}
		for _, want := range []domain.HappeningDetails{meetup, once} {
			if w := strings.Join(calendarSpans(want), "\n"); got[want.Title] != w {
				t.Fatalf("%s reads back as\n%s\nwant\n%s", want.Title, got[want.Title], w)
			}
		}
	})
	t.Run("it answers 304 until the event changes, then a higher SEQUENCE", func(t *testing.T) {
		tag := o.header.Get("ETag")
		fetch(t, f.h, path, map[string]string{"If-None-Match": tag}).must(t, 304)
		before := sequenceOf(t, cal, eventIDOf(once))
		time.Sleep(1100 * time.Millisecond) // SEQUENCE counts whole seconds
		changed := once
		changed.Title = "Event talk, moved upstairs"
		_, res, err := f.h.Service.Commands.DiscoverHappening(context.Background(), commands.DiscoverHappening{SourceID: att.SourceID, Details: changed})
		if err != nil {
			t.Fatal(err)
		}
		projected(t, f.h, res)
		again := fetch(t, f.h, path, map[string]string{"If-None-Match": tag}).must(t, 200)
		cal2, err := ical.NewDecoder(bytes.NewReader(again.body)).Decode()
		if err != nil {
			t.Fatal(err)
		}
		if after := sequenceOf(t, cal2, eventIDOf(once)); after <= before {
			t.Fatalf("SEQUENCE %d after the change, %d before", after, before)
		}
	})
	t.Run("another organization's key answers 404", func(t *testing.T) {
		fetch(t, f.h, path, map[string]string{"Authorization": "Bearer " + f.h.NewKey("other-org")}).must(t, 404)
	})
}

func sequenceOf(t *testing.T, cal *ical.Calendar, uid string) int {
	t.Helper()
	for _, e := range cal.Events() {
		if e.Props.Get(ical.PropUID).Value == uid {
			n, err := strconv.Atoi(e.Props.Get(ical.PropSequence).Value)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatalf("no VEVENT %s", uid)
	return 0
}
