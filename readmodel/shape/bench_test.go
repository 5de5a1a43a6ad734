package shape_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/readmodel/shape"
)

// benchDetails is an event shaped like bench/seed's: a weekly series of
// 10 instances with a full set of members.
func benchDetails(i int) domain.HappeningDetails {
	first := t0.Add(time.Duration(i) * time.Hour)
	url := fmt.Sprintf("https://events.example.com/%d/an-event-with-a-reasonably-long-slug", i)
	d := domain.HappeningDetails{
		Identity: url, Title: fmt.Sprintf("Event %d: a concert, a talk or an exhibition with a real-length title", i),
		Description:      "<p>A paragraph about the event, as event pages usually carry one, long enough to look like the real thing in a response body.</p>",
		ShortDescription: "A short summary of the event.",
		Time:             domain.HappeningTime{TemporalPattern: domain.PatternRecurring, Timezone: "Europe/Berlin", DisplayText: "See the event page for times"},
		Location: &domain.Location{
			Venue:          &domain.Venue{Name: "Kulturhaus", Address: "Hauptstraße 1, 10827 Berlin"},
			Coordinates:    &domain.Coordinates{Lat: 52.48, Lng: 13.35},
			DisplayAddress: "Kulturhaus, Hauptstraße 1, Berlin",
		},
		Organizer:    &domain.Organizer{Name: "Kulturhaus Berlin", URL: "https://events.example.com"},
		PrimaryImage: fmt.Sprintf("https://cdn.example.com/events/%d.jpg", i),
		PrimaryURL:   url, URLs: []string{url}, SupportingImages: []string{},
		GeoLocations: []domain.GeoLocation{
			{ID: uuid.New(), Description: "Kulturhaus, Berlin", RelationType: domain.GeoLocationPoint, Score: 100},
			{ID: uuid.New(), Description: "Berlin", RelationType: domain.GeoRelevanceRange, Score: 80},
		},
		Source: domain.SiteBlock(url),
	}
	for k := range 10 {
		start := first.Add(time.Duration(k) * 7 * 24 * time.Hour)
		d.Instances = append(d.Instances, domain.HappeningInstance{ID: uuid.New(), Key: start.Format(time.RFC3339), Status: domain.StatusScheduled,
			Occurrences: []domain.Occurrence{occ(start, 2*time.Hour)}})
	}
	return d
}

// A page of 20 items as a list renders it: blocks for a 30-day window from
// the occurrences, and the current shape around the stored renderings.
func BenchmarkAPageOfTwentyItems(b *testing.B) {
	from, to := t0, t0.Add(30*24*time.Hour)
	items := make([]shape.Item, 20)
	occs := make([][]shape.Occurrence, 20)
	for i := range items {
		d := benchDetails(i)
		static, err := shape.RenderStatic(d, false)
		if err != nil {
			b.Fatal(err)
		}
		items[i] = shape.Item{ID: uuid.New(), HappeningID: uuid.New(), AddedAt: t0, SourceType: "site", Static: static}
		occs[i] = shape.Flatten(d)
	}
	var buf []byte
	for b.Loop() {
		buf = buf[:0]
		for i, it := range items {
			it.Occurrences = shape.InWindow(occs[i], shape.Window{From: &from, To: &to}, "", from)
			buf = shape.AppendCurrent(buf, it)
		}
	}
	b.SetBytes(int64(len(buf)))
}
