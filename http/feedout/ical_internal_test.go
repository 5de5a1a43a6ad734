package feedout

import (
	"testing"

	"github.com/feedsvc/feedsvc/domain"
)

func TestTheLocationNamesTheVenueOnce(t *testing.T) {
	venue := func(name, address string) *domain.Location {
		return &domain.Location{Venue: &domain.Venue{Name: name}, DisplayAddress: address}
	}
	for _, tc := range []struct {
		name string
		in   *domain.Location
		want string
	}{
		{"no location is no text", nil, ""},
		{"a venue and an address are both", venue("Café Kreuzberg", "Oranienstraße 7, 10997 Berlin"), "Café Kreuzberg, Oranienstraße 7, 10997 Berlin"},
		{"an address that starts with the venue is the whole text", venue("Blue Note", "Blue Note, Hauptstrasse 1"), "Blue Note, Hauptstrasse 1"},
		{"whatever the case and spacing", venue("Blue Note ", "blue note – Hauptstrasse 1"), "blue note – Hauptstrasse 1"},
		{"an address that is the venue is said once", venue("Blue Note", "Blue Note"), "Blue Note"},
		{"a venue that only begins the address's first word is kept", venue("Blue", "Bluestreet 4"), "Blue, Bluestreet 4"},
		{"a venue that begins a longer name is kept", venue("Blue", "Blue Note Hall, Hauptstrasse 1"), "Blue, Blue Note Hall, Hauptstrasse 1"},
		{"a venue alone", venue("Blue Note", ""), "Blue Note"},
		{"an online event is its address", &domain.Location{Online: &domain.Online{URL: "https://meet.example/x"}}, "https://meet.example/x"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := locationText(tc.in); got != tc.want {
				t.Fatalf("locationText: %q, want %q", got, tc.want)
			}
		})
	}
}

func TestTheCalendarsZoneIsTheOneItsEventsShare(t *testing.T) {
	in := func(zone string) Happening {
		return Happening{Details: domain.HappeningDetails{Time: domain.HappeningTime{Timezone: zone}}}
	}
	for _, tc := range []struct {
		name   string
		events []Happening
		want   string
	}{
		{"an empty calendar is UTC", nil, "UTC"},
		{"events all in one zone are in it", []Happening{in("Europe/Berlin"), in("Europe/Berlin")}, "Europe/Berlin"},
		{"events in two zones are UTC", []Happening{in("Europe/Berlin"), in("America/New_York")}, "UTC"},
		{"an event without a zone makes it UTC", []Happening{in("Europe/Berlin"), in("")}, "UTC"},
		{"a zone Go does not know is no zone", []Happening{in("Mars/Olympus")}, "UTC"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := calendarZone(tc.events); got != tc.want {
				t.Fatalf("calendarZone: %q, want %q", got, tc.want)
			}
		})
	}
}

func TestAnOrganizerHasAnAddressOnlyWhenItHasOne(t *testing.T) {
	for _, tc := range []struct {
		name          string
		in            *domain.Organizer
		wantName, uri string
	}{
		{"none", nil, "", ""},
		{"a name alone has no address", &domain.Organizer{Name: "Jazz Club"}, "Jazz Club", ""},
		{"an email contact is mailto", &domain.Organizer{Name: "Band", Contact: "band@example.org"}, "Band", "mailto:band@example.org"},
		{"a mailto contact stays", &domain.Organizer{Name: "Band", Contact: "mailto:band@example.org"}, "Band", "mailto:band@example.org"},
		{"a page is an address", &domain.Organizer{Name: "Choir", URL: "https://choir.example/"}, "Choir", "https://choir.example/"},
		{"email before page", &domain.Organizer{Name: "Choir", URL: "https://choir.example/", Contact: "c@choir.example"}, "Choir", "mailto:c@choir.example"},
		{"a phone number is no address", &domain.Organizer{Name: "Box office", Contact: "+49 30 123"}, "Box office", ""},
		{"a relative or odd URL is no address", &domain.Organizer{Name: "X", URL: "/about"}, "X", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			name, uri := organizerOf(tc.in)
			if name != tc.wantName || uri != tc.uri {
				t.Fatalf("organizerOf: %q %q, want %q %q", name, uri, tc.wantName, tc.uri)
			}
		})
	}
}
