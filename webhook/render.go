package webhook

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/feedsvc/feedsvc/domain"
)

// Render makes the data member of an event.item_added delivery: the event
// item in the legacy layout of api.md 2.9 without sourceType (api.md 6),
// from the add and the event's details as they stood when it was added.
// It must depend on nothing else (no clock, no reads), so the body is a
// function of the log: it is rendered once, when the delivery is queued,
// and every attempt and redelivery sends those exact bytes.
type Render func(item domain.EventItemAdded, details domain.EventDetails) (json.RawMessage, error)

// MinimalItem is a stand-in Render.
//
// SEAM: the event-feed work renders the legacy event item for the /v0 item
// list; that renderer replaces this one (Config.Render) so a webhook and
// the list show an item the same way. This one covers the members api.md 6
// names, with the occurrence block taken over every occurrence and counted
// from the moment of the add.
func MinimalItem(item domain.EventItemAdded, d domain.EventDetails) (json.RawMessage, error) {
	out := legacyItem{
		ID: item.ItemID.String(), EventID: item.EventID.String(), AddedToFeedAt: stamp(item.At),
		Title: d.Title, Description: d.Description, ShortDescription: nullable(d.ShortDescription),
		Occurrence: occurrencesFrom(d.Instances, item.At), Time: nil,
		Location: d.Location, Capacity: d.Capacity, Organizer: d.Organizer,
		PrimaryImage: nullable(d.PrimaryImage), SupportingImages: orEmpty(d.SupportingImages),
		PrimaryURL: nullable(d.PrimaryURL), URLs: orEmpty(d.URLs), GeoLocations: d.GeoLocations,
	}
	if d.Time.TemporalPattern != "" {
		out.Time = &d.Time
	}
	if out.GeoLocations == nil {
		out.GeoLocations = []domain.GeoLocation{}
	}
	b, err := json.Marshal(out)
	if err != nil {
		return nil, fmt.Errorf("render event item %s: %w", item.ItemID, err)
	}
	return b, nil
}

type legacyItem struct {
	ID               string                 `json:"id"`
	EventID          string                 `json:"eventId"`
	AddedToFeedAt    string                 `json:"addedToFeedAt"`
	PublishedAt      *string                `json:"publishedAt"`
	Title            string                 `json:"title"`
	Description      string                 `json:"description"`
	ShortDescription *string                `json:"shortDescription"`
	Occurrence       occurrenceBlock        `json:"occurrence"`
	Time             *domain.EventTime      `json:"time"`
	Location         *domain.EventLocation  `json:"location"`
	Capacity         *domain.EventCapacity  `json:"capacity"`
	Organizer        *domain.EventOrganizer `json:"organizer"`
	PrimaryImage     *string                `json:"primaryImage"`
	SupportingImages []string               `json:"supportingImages"`
	PrimaryURL       *string                `json:"primaryUrl"`
	URLs             []string               `json:"urls"`
	GeoLocations     []domain.GeoLocation   `json:"geoLocations"`
}

type occurrenceBlock struct {
	NextOccurrence      *occurrenceEntry  `json:"nextOccurrence"`
	OccurrencesInRange  []occurrenceEntry `json:"occurrencesInRange"`
	TotalOccurrences    int               `json:"totalOccurrences"`
	UpcomingOccurrences int               `json:"upcomingOccurrences"`
}

type occurrenceEntry struct {
	ID            string  `json:"id"`
	InstanceID    string  `json:"instanceId"`
	StartDateTime string  `json:"startDateTime"`
	EndDateTime   *string `json:"endDateTime"`
	Status        string  `json:"status"`
}

func occurrencesFrom(instances []domain.EventInstance, at time.Time) occurrenceBlock {
	block := occurrenceBlock{OccurrencesInRange: []occurrenceEntry{}}
	for _, in := range instances {
		for _, o := range in.Occurrences {
			e := occurrenceEntry{ID: o.ID.String(), InstanceID: in.ID.String(), StartDateTime: stamp(o.Start), Status: in.Status}
			if o.End != nil {
				end := stamp(*o.End)
				e.EndDateTime = &end
			}
			block.OccurrencesInRange = append(block.OccurrencesInRange, e)
			if o.Start.Before(at) {
				continue
			}
			block.UpcomingOccurrences++
			if block.NextOccurrence == nil || e.StartDateTime < block.NextOccurrence.StartDateTime {
				next := e
				block.NextOccurrence = &next
			}
		}
	}
	block.TotalOccurrences = len(block.OccurrencesInRange)
	return block
}

func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// stamp is the API's timestamp form (D2).
func stamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }
