package shape

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/feedsvc/feedsvc/domain"
)

// Static is the part of an item that depends on its event alone, in one
// shape, as runs of JSON object members (no braces): Head (title,
// description, shortDescription), Published (publishedAt; empty when the
// shape omits it) and Tail (time to geoLocations). The read model stores it
// per event, so a list renders no event members per request.
type Static struct {
	Head      []byte
	Published []byte
	Tail      []byte
}

// RenderStatic renders an event's static members in the current shape
// (absent optional members omitted, the strip-null rule of api.md 2) or the
// legacy one (absent members null; publishedAt always null).
func RenderStatic(d domain.HappeningDetails, legacy bool) (Static, error) {
	s := shape{legacy: legacy}
	head := headJSON{
		Title: strings.TrimSpace(d.Title), Description: strings.TrimSpace(d.Description),
		ShortDescription: s.str(d.ShortDescription),
	}
	published := publishedJSON{PublishedAt: s.time(d.PublishedAt)}
	if legacy {
		// The legacy shape never had a publish time (api.md 2.9).
		published.PublishedAt = none[string](s)
	}
	tail := tailJSON{
		Time: timeOut(d.Time, s), Location: none[locationJSON](s), Capacity: none[capacityJSON](s), Organizer: none[organizerJSON](s),
		PrimaryImage: s.str(d.PrimaryImage), SupportingImages: nonNil(d.SupportingImages),
		PrimaryURL: s.str(d.PrimaryURL), URLs: nonNil(d.URLs), GeoLocations: make([]geoLocationJSON, 0, len(d.GeoLocations)),
	}
	if d.Location != nil {
		tail.Location = some(s, locationOut(*d.Location, s))
	}
	if c := d.Capacity; c != nil {
		tail.Capacity = some(s, capacityJSON{Total: s.num(c.Total), Available: s.num(c.Available), Unlimited: c.Unlimited})
	}
	if o := d.Organizer; o != nil {
		tail.Organizer = some(s, organizerJSON{Name: strings.TrimSpace(o.Name), URL: s.str(o.URL), Contact: s.str(o.Contact)})
	}
	for _, g := range d.GeoLocations {
		tail.GeoLocations = append(tail.GeoLocations, geoLocationJSON{
			ID: g.ID.String(), Description: g.Description, RelationType: g.RelationType, Score: g.Score,
		})
	}
	var out Static
	var err error
	if out.Head, err = members(head); err != nil {
		return Static{}, err
	}
	if out.Published, err = members(published); err != nil {
		return Static{}, err
	}
	out.Tail, err = members(tail)
	return out, err
}

// SourceBlock is the event's source block (api.md 2.4), for include=source.
func SourceBlock(d domain.HappeningDetails) ([]byte, error) { return encode(d.Source) }

// members is v's JSON object without its braces.
func members(v any) ([]byte, error) {
	b, err := encode(v)
	return bytes.TrimSuffix(bytes.TrimPrefix(b, []byte("{")), []byte("}")), err
}

// encode is v's JSON. Titles and descriptions may hold (sanitised) HTML:
// it is written as is rather than as \u003c escapes, which only pages that
// embed JSON in HTML need.
func encode(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("render event item: %w", err)
	}
	return bytes.TrimSpace(buf.Bytes()), nil
}

type headJSON struct {
	Title            string      `json:"title"`
	Description      string      `json:"description"`
	ShortDescription opt[string] `json:"shortDescription,omitzero"`
}

type publishedJSON struct {
	PublishedAt opt[string] `json:"publishedAt,omitzero"`
}

type tailJSON struct {
	Time             opt[timeJSON]      `json:"time,omitzero"`
	Location         opt[locationJSON]  `json:"location,omitzero"`
	Capacity         opt[capacityJSON]  `json:"capacity,omitzero"`
	Organizer        opt[organizerJSON] `json:"organizer,omitzero"`
	PrimaryImage     opt[string]        `json:"primaryImage,omitzero"`
	SupportingImages []string           `json:"supportingImages"`
	PrimaryURL       opt[string]        `json:"primaryUrl,omitzero"`
	URLs             []string           `json:"urls"`
	GeoLocations     []geoLocationJSON  `json:"geoLocations"`
}

type timeJSON struct {
	TemporalPattern opt[string] `json:"temporalPattern,omitzero"`
	Timezone        opt[string] `json:"timezone,omitzero"`
	DisplayText     opt[string] `json:"displayText,omitzero"`
}

func timeOut(t domain.HappeningTime, s shape) opt[timeJSON] {
	if t == (domain.HappeningTime{}) {
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

func locationOut(l domain.Location, s shape) locationJSON {
	out := locationJSON{
		Venue: none[venueJSON](s), Coordinates: none[domain.Coordinates](s), Online: none[onlineJSON](s),
		DisplayAddress: s.str(l.DisplayAddress),
	}
	if l.Venue != nil {
		out.Venue = some(s, venueJSON{Name: strings.TrimSpace(l.Venue.Name), Address: s.str(l.Venue.Address)})
	}
	if c := l.Coordinates; c != nil && finite(c.Lat) && finite(c.Lng) {
		out.Coordinates = some(s, *c)
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
// strip-null rule, through omitzero and IsZero); the legacy shape writes
// null.
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

// finite: JSON has no NaN or infinity, and one must not stop the projector.
func finite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }

func nonNil(list []string) []string {
	if list == nil {
		return []string{}
	}
	return list
}
