package eventshape

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/domain"
)

// Item is what an event item is rendered from.
type Item struct {
	ID         uuid.UUID
	EventID    uuid.UUID
	AddedAt    time.Time
	SourceType string
	Details    domain.EventDetails
	// Occurrences is the block for the query that asks (InWindow or
	// Everything).
	Occurrences Occurrences
	// Relevance is the score against the feed's config; nil when the feed
	// does not score (current shape only).
	Relevance *float64
}

// RelevanceFunc scores an event against an event feed's config (D9); false
// when the config gives nothing to score by.
type RelevanceFunc func(d domain.EventDetails, cfg domain.FeedConfig) (float64, bool)

// Score is f's score of d against cfg, nil when f is unset or does not
// score.
func (f RelevanceFunc) Score(d domain.EventDetails, cfg domain.FeedConfig) *float64 {
	if f == nil {
		return nil
	}
	score, ok := f(d, cfg)
	if !ok {
		return nil
	}
	return &score
}

// Data is an event item's members in the order of api.md 2.9. Members that
// only one shape has are empty in the other and left out.
type Data struct {
	ID               string              `json:"id"`
	EventID          string              `json:"eventId"`
	Title            string              `json:"title"`
	Description      string              `json:"description"`
	ShortDescription opt[string]         `json:"shortDescription,omitzero"`
	RelevanceScore   *float64            `json:"relevanceScore,omitempty"`
	AddedToFeedAt    string              `json:"addedToFeedAt"`
	PublishedAt      opt[string]         `json:"publishedAt,omitzero"`
	Occurrence       occurrenceJSON      `json:"occurrence"`
	Time             opt[timeJSON]       `json:"time,omitzero"`
	Location         opt[locationJSON]   `json:"location,omitzero"`
	Capacity         opt[capacityJSON]   `json:"capacity,omitzero"`
	Organizer        opt[organizerJSON]  `json:"organizer,omitzero"`
	PrimaryImage     opt[string]         `json:"primaryImage,omitzero"`
	SupportingImages []string            `json:"supportingImages"`
	PrimaryURL       opt[string]         `json:"primaryUrl,omitzero"`
	URLs             []string            `json:"urls"`
	GeoLocations     []geoLocationJSON   `json:"geoLocations"`
	Source           *domain.SourceBlock `json:"source,omitempty"`
}

// LegacyItem is the legacy shape: sourceType at the root, then Data with
// nulls for what is absent, no source block and no relevanceScore.
type LegacyItem struct {
	SourceType string `json:"sourceType"`
	Data
}

// Current renders the current shape: absent optional members are omitted
// (the strip-null rule), arrays always present, the source block only when
// asked for.
func Current(it Item, includeSource bool) Data {
	out := render(it, shape{})
	out.RelevanceScore = it.Relevance
	if includeSource {
		block := it.Details.Source
		out.Source = &block
	}
	return out
}

// Legacy renders the legacy shape of the v0 list. The event.item_added
// webhook's data is its Data: the same layout without sourceType.
func Legacy(it Item) LegacyItem {
	out := render(it, shape{legacy: true})
	// The legacy shape never had a publish time (api.md 2.9).
	out.PublishedAt = none[string](shape{legacy: true})
	return LegacyItem{SourceType: it.SourceType, Data: out}
}

// Timestamp is the API's time format: UTC, millisecond precision (D2).
func Timestamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

func render(it Item, s shape) Data {
	d := it.Details
	out := Data{
		ID: it.ID.String(), EventID: it.EventID.String(),
		Title: strings.TrimSpace(d.Title), Description: strings.TrimSpace(d.Description),
		ShortDescription: s.str(d.ShortDescription),
		AddedToFeedAt:    Timestamp(it.AddedAt),
		PublishedAt:      s.time(d.PublishedAt),
		Occurrence:       occurrenceOut(it.Occurrences, s),
		Time:             timeOut(d.Time, s),
		Location:         none[locationJSON](s),
		Capacity:         none[capacityJSON](s),
		Organizer:        none[organizerJSON](s),
		PrimaryImage:     s.str(d.PrimaryImage),
		SupportingImages: nonNil(d.SupportingImages),
		PrimaryURL:       s.str(d.PrimaryURL),
		URLs:             nonNil(d.URLs),
		GeoLocations:     make([]geoLocationJSON, 0, len(d.GeoLocations)),
	}
	if d.Location != nil {
		out.Location = some(s, locationOut(*d.Location, s))
	}
	if c := d.Capacity; c != nil {
		out.Capacity = some(s, capacityJSON{Total: s.num(c.Total), Available: s.num(c.Available), Unlimited: c.Unlimited})
	}
	if o := d.Organizer; o != nil {
		out.Organizer = some(s, organizerJSON{Name: strings.TrimSpace(o.Name), URL: s.str(o.URL), Contact: s.str(o.Contact)})
	}
	for _, g := range d.GeoLocations {
		out.GeoLocations = append(out.GeoLocations, geoLocationJSON{
			ID: g.ID.String(), Description: g.Description, RelationType: g.RelationType, Score: g.Score,
		})
	}
	return out
}

type occurrenceJSON struct {
	NextOccurrence      opt[entryJSON] `json:"nextOccurrence,omitzero"`
	OccurrencesInRange  []entryJSON    `json:"occurrencesInRange"`
	TotalOccurrences    int            `json:"totalOccurrences"`
	UpcomingOccurrences int            `json:"upcomingOccurrences"`
}

type entryJSON struct {
	ID            string      `json:"id"`
	InstanceID    string      `json:"instanceId"`
	StartDateTime string      `json:"startDateTime"`
	EndDateTime   opt[string] `json:"endDateTime,omitzero"`
	Status        string      `json:"status"`
}

func occurrenceOut(o Occurrences, s shape) occurrenceJSON {
	out := occurrenceJSON{
		NextOccurrence:      none[entryJSON](s),
		OccurrencesInRange:  make([]entryJSON, 0, len(o.Selected)),
		TotalOccurrences:    len(o.Selected),
		UpcomingOccurrences: o.Upcoming,
	}
	for _, e := range o.Selected {
		out.OccurrencesInRange = append(out.OccurrencesInRange, entryOut(e, s))
	}
	if o.Next != nil {
		out.NextOccurrence = some(s, entryOut(*o.Next, s))
	}
	return out
}

func entryOut(e Entry, s shape) entryJSON {
	return entryJSON{
		ID: e.ID.String(), InstanceID: e.InstanceID.String(), StartDateTime: Timestamp(e.Start),
		EndDateTime: s.time(e.End), Status: e.Status,
	}
}

type timeJSON struct {
	TemporalPattern opt[string] `json:"temporalPattern,omitzero"`
	Timezone        opt[string] `json:"timezone,omitzero"`
	DisplayText     opt[string] `json:"displayText,omitzero"`
}

func timeOut(t domain.EventTime, s shape) opt[timeJSON] {
	if t == (domain.EventTime{}) {
		return none[timeJSON](s)
	}
	return some(s, timeJSON{TemporalPattern: s.str(t.TemporalPattern), Timezone: s.str(t.Timezone), DisplayText: s.str(t.DisplayText)})
}

type locationJSON struct {
	Venue          opt[venueJSON]          `json:"venue,omitzero"`
	Coordinates    opt[domain.Coordinates] `json:"coordinates,omitzero"`
	Online         opt[onlineJSON]         `json:"online,omitzero"`
	DisplayAddress opt[string]             `json:"displayAddress,omitzero"`
}

type venueJSON struct {
	Name    string      `json:"name"`
	Address opt[string] `json:"address,omitzero"`
}

type onlineJSON struct {
	Platform opt[string] `json:"platform,omitzero"`
	URL      opt[string] `json:"url,omitzero"`
}

func locationOut(l domain.EventLocation, s shape) locationJSON {
	out := locationJSON{
		Venue: none[venueJSON](s), Coordinates: none[domain.Coordinates](s), Online: none[onlineJSON](s),
		DisplayAddress: s.str(l.DisplayAddress),
	}
	if l.Venue != nil {
		out.Venue = some(s, venueJSON{Name: strings.TrimSpace(l.Venue.Name), Address: s.str(l.Venue.Address)})
	}
	if l.Coordinates != nil {
		out.Coordinates = some(s, *l.Coordinates)
	}
	if l.Online != nil {
		out.Online = some(s, onlineJSON{Platform: s.str(l.Online.Platform), URL: s.str(l.Online.URL)})
	}
	return out
}

type capacityJSON struct {
	Total     opt[int] `json:"total,omitzero"`
	Available opt[int] `json:"available,omitzero"`
	Unlimited bool     `json:"unlimited"`
}

type organizerJSON struct {
	Name    string      `json:"name"`
	URL     opt[string] `json:"url,omitzero"`
	Contact opt[string] `json:"contact,omitzero"`
}

type geoLocationJSON struct {
	ID           string `json:"id"`
	Description  string `json:"description"`
	RelationType string `json:"relationType"`
	Score        int    `json:"score"`
}

// shape is which of the two shapes is being rendered: it decides what an
// absent member becomes.
type shape struct{ legacy bool }

// opt is an optional member. The current shape omits it when absent (the
// strip-null rule of api.md 2, through omitzero and IsZero); the legacy
// shape writes null.
type opt[T any] struct {
	value  T
	set    bool
	legacy bool
}

func (o opt[T]) IsZero() bool { return !o.set && !o.legacy }

func (o opt[T]) MarshalJSON() ([]byte, error) {
	if !o.set {
		return []byte("null"), nil
	}
	return json.Marshal(o.value)
}

func some[T any](s shape, v T) opt[T] { return opt[T]{value: v, set: true, legacy: s.legacy} }

func none[T any](s shape) opt[T] { return opt[T]{legacy: s.legacy} }

// str is a text member: absent when empty after trimming.
func (s shape) str(v string) opt[string] {
	if v = strings.TrimSpace(v); v != "" {
		return some(s, v)
	}
	return none[string](s)
}

func (s shape) time(t *time.Time) opt[string] {
	if t == nil {
		return none[string](s)
	}
	return some(s, Timestamp(*t))
}

func (s shape) num(n *int) opt[int] {
	if n == nil {
		return none[int](s)
	}
	return some(s, *n)
}

func nonNil(list []string) []string {
	if list == nil {
		return []string{}
	}
	return list
}
