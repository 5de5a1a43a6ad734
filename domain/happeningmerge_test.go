package domain_test

import (
	"testing"
	"time"

	"github.com/feedsvc/feedsvc/domain"
)

func listingAt(identity, page, title string, starts ...time.Time) domain.HappeningDetails {
	d := domain.HappeningDetails{Identity: identity, Title: title, Source: domain.SiteBlock(page), PrimaryURL: page}
	for _, s := range starts {
		d.Instances = append(d.Instances, domain.HappeningInstance{Key: s.Format(time.RFC3339), Status: domain.StatusScheduled,
			Occurrences: []domain.Occurrence{{Start: s}}})
	}
	return d
}

func TestAListingsPrecedenceIsReadOffWhatTheLogKeepsOfIt(t *testing.T) {
	for _, tc := range []struct {
		name string
		d    domain.HappeningDetails
		want int
	}{
		{"an event's own page", listingAt("url:https://tickets.example/trio", "https://Tickets.example/trio/", "Trio"), domain.PrecedenceOwnPage},
		{"a page listing several events", listingAt("page:https://venue.example/programme#trio", "https://venue.example/programme", "Trio"), domain.PrecedenceListing},
		{"an event a listing links to its own page", listingAt("url:https://venue.example/trio", "https://venue.example/programme", "Trio"), domain.PrecedenceListing},
		{"a calendar entry with a UID", listingAt("uid:trio@venue.example", "https://venue.example/season", "Trio"), domain.PrecedenceCalendar},
		{"a calendar file's entry with an address", listingAt("url:https://venue.example/trio", "https://venue.example/season.ics", "Trio"), domain.PrecedenceCalendar},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.d.Precedence(); got != tc.want {
				t.Errorf("precedence %d, want %d", got, tc.want)
			}
		})
	}
}

func TestListingsOfOneHappeningMergeByPrecedenceWithTheUnionOfTheirOccurrences(t *testing.T) {
	night := time.Date(2026, 12, 3, 17, 0, 0, 0, time.UTC)
	own := listingAt("page:https://venue.example/programme#trio", "https://venue.example/programme", "Marta Kowalska Trio", night, night.Add(24*time.Hour))
	own.Description = "New compositions."
	own.Location = &domain.Location{Venue: &domain.Venue{Name: "Blue Note"}, Coordinates: &domain.Coordinates{Lat: 50.06, Lng: 19.94}}
	page := listingAt("url:https://tickets.example/trio", "https://tickets.example/trio", "Marta Kowalska Trio – live", night)
	page.PrimaryImage = "https://tickets.example/trio.jpg"
	page.Location = &domain.Location{Venue: &domain.Venue{Name: "Blue Note Jazz Club"}, DisplayAddress: "Floriańska 3"}
	ics := listingAt("uid:trio@venue.example", "https://venue.example/season.ics", "TRIO", night, night.Add(48*time.Hour))
	ics.Description = "Calendar text."

	for _, tc := range []struct {
		name   string
		own    domain.HappeningDetails
		copies []domain.HappeningDetails
	}{
		{"found on the listing first", own, []domain.HappeningDetails{ics, page}},
		{"found on the calendar first", ics, []domain.HappeningDetails{own, page}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := domain.MergeHappenings(tc.own, tc.copies...)
			if m.Title != page.Title || m.PrimaryImage != page.PrimaryImage || m.PrimaryURL != page.PrimaryURL {
				t.Errorf("title %q, image %q, url %q: want the event's own page's", m.Title, m.PrimaryImage, m.PrimaryURL)
			}
			if m.Description != own.Description {
				t.Errorf("description %q, want the listing's (the page has none; the listing comes before the calendar)", m.Description)
			}
			if m.Location.Venue.Name != "Blue Note Jazz Club" || m.Location.Coordinates == nil || m.Location.DisplayAddress != "Floriańska 3" {
				t.Errorf("location %+v: want the page's venue and address, with the listing's coordinates", *m.Location)
			}
			if m.Identity != tc.own.Identity || m.Source != tc.own.Source {
				t.Errorf("identity %q and source %v, want the item's own", m.Identity, m.Source)
			}
			var starts []time.Time
			for _, in := range m.Instances {
				starts = append(starts, in.Occurrences[0].Start)
			}
			if len(starts) != 3 || !starts[0].Equal(night) || !starts[1].Equal(night.Add(24*time.Hour)) || !starts[2].Equal(night.Add(48*time.Hour)) {
				t.Errorf("instances start at %v, want the three nights once each, in order", starts)
			}
			if len(m.URLs) != 3 {
				t.Errorf("urls %v, want each listing's page", m.URLs)
			}
		})
	}
	t.Run("a happening no other source lists is itself", func(t *testing.T) {
		if m := domain.MergeHappenings(own); m.Title != own.Title || len(m.Instances) != 2 {
			t.Errorf("merged alone: %+v", m)
		}
	})
	t.Run("merging leaves the listings as they were", func(t *testing.T) {
		before := len(own.Instances)
		domain.MergeHappenings(page, own, ics)
		if len(own.Instances) != before || own.Location.Venue.Name != "Blue Note" || len(page.Instances) != 1 || page.Location.Coordinates != nil {
			t.Errorf("a listing changed: %+v %+v", own, page)
		}
	})
}
