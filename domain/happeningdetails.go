package domain

import (
	"time"

	"github.com/google/uuid"
)

// HappeningDetails is what extraction found about one happening (api.md 2.9): its
// text, when it happens (instances, each with its occurrences), where, and
// who runs it. It is stored whole in EventDiscovered and EventChanged, so
// the log alone rebuilds every event item. Titles and descriptions are
// sanitised HTML by the time they get here.
type HappeningDetails struct {
	// Identity names the happening across documents and crawls: its own URL,
	// an iCalendar UID, or the page and its name (see the extractor). Two
	// findings with one identity are one happening.
	Identity         string     `json:"identity"`
	Title            string     `json:"title"`
	Description      string     `json:"description"`
	ShortDescription string     `json:"shortDescription,omitempty"`
	PublishedAt      *time.Time `json:"publishedAt,omitempty"`
	// ModifiedAt is when the page says the happening last changed, if it does.
	ModifiedAt *time.Time `json:"modifiedAt,omitempty"`

	Time      HappeningTime       `json:"time"`
	Instances []HappeningInstance `json:"instances"`
	// Horizon is how far ahead recurring instances were expanded; the
	// extractor expands a bounded span, and a later crawl extends it.
	Horizon *time.Time `json:"horizon,omitempty"`
	// ExpandedFrom is where the expansion of recurring instances began; it
	// moves forward month by month, so older findings hold past instances
	// a newer one no longer lists.
	ExpandedFrom *time.Time `json:"expandedFrom,omitempty"`

	Location         *Location     `json:"location,omitempty"`
	Capacity         *Capacity     `json:"capacity,omitempty"`
	Organizer        *Organizer    `json:"organizer,omitempty"`
	PrimaryImage     string        `json:"primaryImage,omitempty"`
	SupportingImages []string      `json:"supportingImages"`
	PrimaryURL       string        `json:"primaryUrl,omitempty"`
	URLs             []string      `json:"urls"`
	GeoLocations     []GeoLocation `json:"geoLocations"`
	// Source is the item's source block (api.md 2.4): for a site, the page
	// the happening was found on.
	Source SourceBlock `json:"source"`
	// Rank is the precedence of the document the details were read from
	// (ingest/calendar.Precedence), when the crawl recorded it; details
	// recorded before it was kept have none (Precedence reads it off them).
	// It is not part of what a happening is: a finding that differs only in
	// its rank is no change.
	Rank int `json:"rank,omitempty"`
}

// HappeningTime is the time block of 2.9.
type HappeningTime struct {
	// TemporalPattern is singular, recurring or ongoing.
	TemporalPattern string `json:"temporalPattern"`
	// Timezone is an IANA name: from the data or, when absent, from the
	// coordinates.
	Timezone    string `json:"timezone"`
	DisplayText string `json:"displayText"`
}

// Temporal patterns.
const (
	PatternSingular  = "singular"
	PatternRecurring = "recurring"
	PatternOngoing   = "ongoing"
)

// HappeningInstance is one instance of a happening: the only one of a one-time
// or multi-day happening, or one recurrence of a recurring one. Its status is
// the one stated by the source; "completed" is derived when reading, from
// the clock, so it is never stored.
type HappeningInstance struct {
	// Key is stable across crawls: the instance's original start (the
	// RECURRENCE-ID of an override), so its id survives a reschedule.
	Key           string       `json:"key"`
	ID            uuid.UUID    `json:"id"`
	Status        string       `json:"status"`
	PreviousStart *time.Time   `json:"previousStart,omitempty"`
	Occurrences   []Occurrence `json:"occurrences"`
}

// Occurrence is one contiguous span: a one-time happening's only one, or
// one local day of a multi-day happening.
type Occurrence struct {
	ID    uuid.UUID  `json:"id"`
	Start time.Time  `json:"start"`
	End   *time.Time `json:"end,omitempty"`
	// AllDay: Start and End are local midnights of the happening's zone.
	AllDay bool `json:"allDay,omitempty"`
}

// Instance statuses as sources state them (api.md 2.9); StatusCompleted is
// derived when an instance has ended.
const (
	StatusScheduled   = "scheduled"
	StatusCancelled   = "cancelled"
	StatusPostponed   = "postponed"
	StatusRescheduled = "rescheduled"
	StatusCompleted   = "completed"
)

// HappeningStatuses are every status a client may filter by.
var HappeningStatuses = []string{StatusScheduled, StatusCancelled, StatusPostponed, StatusRescheduled, StatusCompleted}

// Location is the location block of 2.9, with the address parts the
// geographic relevance is computed from.
type Location struct {
	Venue          *Venue       `json:"venue,omitempty"`
	Coordinates    *Coordinates `json:"coordinates,omitempty"`
	Online         *Online      `json:"online,omitempty"`
	DisplayAddress string       `json:"displayAddress"`
	Locality       string       `json:"locality,omitempty"`
	Region         string       `json:"region,omitempty"`
	Country        string       `json:"country,omitempty"`
	// ApproximateCoordinates are those of the place the address names (its
	// locality's centre) when the happening has no coordinates of its own:
	// geographic relevance ranks the happening by them. They are never shown
	// as the happening's coordinates; its geoLocations say how near the happening
	// is known (a LOCATION without coordinates scores below 100, the
	// locality is a RELEVANCE_REGION).
	ApproximateCoordinates *Coordinates `json:"approximateCoordinates,omitempty"`
}

type Venue struct {
	Name    string `json:"name"`
	Address string `json:"address,omitempty"`
}

type Coordinates struct {
	Lat float64 `json:"lat"`
	Lng float64 `json:"lng"`
}

type Online struct {
	Platform string `json:"platform"`
	URL      string `json:"url"`
}

// Capacity is the capacity block of 2.9.
type Capacity struct {
	Total     *int `json:"total,omitempty"`
	Available *int `json:"available,omitempty"`
	Unlimited bool `json:"unlimited"`
}

// Organizer is the organizer block of 2.9.
type Organizer struct {
	Name    string `json:"name"`
	URL     string `json:"url,omitempty"`
	Contact string `json:"contact,omitempty"`
}

// GeoLocation is a place the happening is at (LOCATION) or relevant to
// (RELEVANCE_REGION), scored 0-100.
type GeoLocation struct {
	ID           uuid.UUID `json:"id"`
	Description  string    `json:"description"`
	RelationType string    `json:"relationType"`
	Score        int       `json:"score"`
}

// Geo relation types.
const (
	GeoLocationPoint  = "LOCATION"
	GeoRelevanceRange = "RELEVANCE_REGION"
)

// SearchText is what a search of events reads of a happening, in the order
// the event items' full-text search weighs it: its title, description,
// venue name and address, displayed address and organizer.
func (d HappeningDetails) SearchText() []string {
	out := []string{d.Title, d.Description}
	if d.Location != nil {
		if d.Location.Venue != nil {
			out = append(out, d.Location.Venue.Name, d.Location.Venue.Address)
		}
		out = append(out, d.Location.DisplayAddress)
	}
	if d.Organizer != nil {
		out = append(out, d.Organizer.Name)
	}
	return out
}
