package calendar

import (
	"cmp"
	"html"
	"math"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/ingest/extract"
)

// eventTypes are the schema.org Event subtypes whose names do not end in
// "Event"; every type that does (MusicEvent, TheaterEvent, SportsEvent,
// EducationEvent, ExhibitionEvent, ...) is an event too.
var eventTypes = map[string]bool{"Festival": true, "CourseInstance": true}

// isEventType reports whether a JSON-LD @type names a schema.org event.
func isEventType(v any) bool {
	for _, t := range extract.LDTypes(v) {
		if eventTypes[t] || strings.HasSuffix(t, "Event") {
			return true
		}
	}
	return false
}

// graph is the linked data of one document: the event nodes found and
// every node by @id, for resolving references.
type graph struct {
	ids  map[string]map[string]any
	base *url.URL
	// from is the start of the window recurrences are expanded over: a
	// schedule without a start runs from it.
	from time.Time
}

// deref resolves {"@id": ...} to the node it names.
func (g graph) deref(v any) any {
	m, ok := v.(map[string]any)
	if !ok {
		return v
	}
	if id, ok := m["@id"].(string); ok && len(m) == 1 {
		if n, ok := g.ids[id]; ok {
			return n
		}
	}
	return m
}

// list is a value as a list: schema.org allows one or many anywhere.
func (g graph) list(v any) []any {
	switch t := v.(type) {
	case nil:
		return nil
	case []any:
		out := make([]any, 0, len(t))
		for _, e := range t {
			out = append(out, g.deref(e))
		}
		return out
	default:
		return []any{g.deref(t)}
	}
}

func (g graph) node(v any) map[string]any {
	for _, e := range g.list(v) {
		if m, ok := e.(map[string]any); ok {
			return m
		}
	}
	return nil
}

func text(v any) string { return extract.Clean(extract.LDString(v)) }

func (g graph) url(v any) string {
	for _, e := range g.list(v) {
		s := text(e)
		if m, ok := e.(map[string]any); ok && s == "" {
			s = cmp.Or(text(m["url"]), text(m["@id"]))
		}
		if u := extract.Resolve(g.base, s); u != "" {
			return u
		}
	}
	return ""
}

// inherit lets sub-events take the place and organiser of the event they
// are part of when they name none, in both directions of the link
// (subEvent, superEvent).
func (g graph) inherit(events []map[string]any) {
	for _, n := range events {
		for _, sub := range g.list(n["subEvent"]) {
			if m, ok := sub.(map[string]any); ok {
				fill(m, n)
			}
		}
		if super := g.node(n["superEvent"]); super != nil {
			fill(n, super)
		}
	}
}

func fill(child, parent map[string]any) {
	for _, k := range []string{"location", "organizer", "eventAttendanceMode"} {
		if _, ok := child[k]; !ok && parent[k] != nil {
			child[k] = parent[k]
		}
	}
}

// draft reads one schema.org event node.
func (g graph) draft(n map[string]any) (draft, bool) {
	where := g.location(n["location"])
	// An online event that names no virtual place is held at its own URL.
	status, movedOnline := ldStatus(text(n["eventStatus"]))
	if movedOnline || strings.HasSuffix(text(n["eventAttendanceMode"]), "OnlineEventAttendanceMode") {
		where = withOnline(where, g.url(n["url"]))
	}
	sched := g.node(n["eventSchedule"])
	loc := eventZone(text(sched["scheduleTimezone"]), where, writtenOffset(text(n["startDate"])))
	when, ok := g.when(n, sched, loc)
	if !ok {
		return draft{}, false
	}
	when.status = status
	dr := draft{
		url:         g.url(n["url"]),
		title:       cmp.Or(extract.LDString(n["name"]), extract.LDString(n["headline"])),
		description: ldDescription(extract.LDString(n["description"])),
		loc:         loc,
		when:        when,
		location:    where,
		capacity:    g.capacity(n),
		organizer:   g.organizer(n["organizer"]),
		images:      g.images(n["image"]),
		published:   ldTime(text(n["datePublished"])),
		modified:    ldTime(text(n["dateModified"])),
	}
	for _, o := range g.list(n["offers"]) {
		if m, ok := o.(map[string]any); ok {
			dr.urls = append(dr.urls, g.url(m["url"]))
		}
	}
	for _, s := range g.list(n["sameAs"]) {
		dr.urls = append(dr.urls, g.url(s))
	}
	return dr, true
}

// ldDescription is a description as HTML. WordPress plugins write HTML
// entity-encoded ("&lt;p&gt;"), others write plain text with line breaks:
// the entities are decoded once and text without markup is escaped.
func ldDescription(s string) string {
	if !strings.Contains(s, "<") && strings.Contains(s, "&") {
		s = html.UnescapeString(s)
	}
	if looksLikeHTML(s) {
		return s
	}
	return textToHTML(html.UnescapeString(s))
}

// ldStatus maps eventStatus; EventMovedOnline is a scheduled event that
// now happens online.
func ldStatus(s string) (status string, movedOnline bool) {
	switch {
	case strings.HasSuffix(s, "EventCancelled"):
		return domain.StatusCancelled, false
	case strings.HasSuffix(s, "EventPostponed"):
		return domain.StatusPostponed, false
	case strings.HasSuffix(s, "EventRescheduled"):
		return domain.StatusRescheduled, false
	case strings.HasSuffix(s, "EventMovedOnline"):
		return domain.StatusScheduled, true
	}
	return domain.StatusScheduled, false
}

func withOnline(where *domain.Location, eventURL string) *domain.Location {
	if eventURL == "" || where != nil && where.Online != nil {
		return where
	}
	if where == nil {
		where = &domain.Location{}
	}
	where.Online = onlineAt(eventURL, "")
	return where
}

// when reads startDate, endDate (or duration), previousStartDate and an
// eventSchedule in the event's zone.
func (g graph) when(n, sched map[string]any, loc *time.Location) (schedule, bool) {
	first, ok := ldSpan(text(n["startDate"]), text(n["endDate"]), text(n["duration"]), loc)
	if sched != nil {
		if s, ok := g.schedule(sched, first, ok, loc); ok {
			return s, true
		}
	}
	if !ok {
		return schedule{}, false
	}
	s := schedule{first: first}
	if prev, kind := extract.ParseDateIn(text(n["previousStartDate"]), loc); kind != extract.NoDate && !prev.Equal(first.start) {
		s.previous = &prev
	}
	return s, true
}

// ldSpan reads a start and an end (or a duration). A date alone is an
// all-day event; schema.org's end date is the last day, inclusive.
func ldSpan(start, end, duration string, loc *time.Location) (span, bool) {
	t, kind := extract.ParseDateIn(start, loc)
	if kind == extract.NoDate {
		return span{}, false
	}
	sp := span{start: t, allDay: kind == extract.DateOnly}
	if e, ekind := extract.ParseDateIn(end, loc); ekind != extract.NoDate {
		if sp.allDay {
			y, m, d := e.In(loc).Date()
			sp.end = time.Date(y, m, d+1, 0, 0, 0, 0, loc)
		} else {
			sp.end = e
		}
	} else if dur, ok := isoDuration(duration); ok && !sp.allDay {
		sp.end = t.Add(dur)
	}
	if !sp.end.IsZero() && !sp.end.After(sp.start) {
		sp.end = time.Time{}
	}
	if sp.allDay && sp.end.IsZero() {
		y, m, d := t.Date()
		sp.end = time.Date(y, m, d+1, 0, 0, 0, 0, loc)
	}
	return sp, true
}

// writtenOffset is the UTC offset a date-time was written with, if any:
// the last hint of an event's zone.
func writtenOffset(s string) *int {
	t, kind := extract.ParseDateIn(s, time.UTC)
	if kind != extract.ZonedDateTime {
		return nil
	}
	_, off := t.Zone()
	return &off
}

func ldTime(s string) *time.Time {
	if t := extract.ParseDate(s); !t.IsZero() {
		return &t
	}
	return nil
}

// location reads a schema.org location: a Place (name, address, geo), a
// PostalAddress, a VirtualLocation, a plain string or URL, or a list of
// those (a hybrid event).
func (g graph) location(v any) *domain.Location {
	var a address
	var coords *domain.Coordinates
	var online *domain.Online
	for _, e := range g.list(v) {
		switch t := e.(type) {
		case string:
			s := extract.Clean(t)
			if u := extract.Resolve(g.base, s); u != "" && strings.HasPrefix(strings.ToLower(s), "http") {
				online = onlineAt(u, "")
			} else if a.venue == "" && a.street == "" {
				a = parseAddressText(s)
			}
		case map[string]any:
			if hasType(t, "VirtualLocation") {
				if u := g.url(t["url"]); u != "" {
					online = onlineAt(u, text(t["name"]))
				}
				continue
			}
			if a.venue == "" && a.street == "" && a.locality == "" {
				a = g.place(t)
			}
			if coords == nil {
				coords = g.coordinates(t)
			}
		}
	}
	return a.location(coords, online)
}

func hasType(n map[string]any, want string) bool {
	for _, t := range extract.LDTypes(n["@type"]) {
		if t == want {
			return true
		}
	}
	return false
}

// place reads a Place (or a PostalAddress given as the location).
func (g graph) place(n map[string]any) address {
	if hasType(n, "PostalAddress") {
		return g.postalAddress(n)
	}
	a := address{}
	switch addr := g.deref(n["address"]).(type) {
	case string:
		a = parseAddressText(addr)
		if a.venue != "" && a.street == "" && a.locality == "" {
			a.street, a.venue = a.venue, ""
		} else if a.venue != "" {
			a.street = joinNonEmpty(", ", a.venue, a.street)
			a.venue = ""
		}
	case map[string]any:
		a = g.postalAddress(addr)
	case []any:
		if m := g.node(addr); m != nil {
			a = g.postalAddress(m)
		}
	}
	a.venue = text(n["name"])
	return a
}

func (g graph) postalAddress(n map[string]any) address {
	country := text(n["addressCountry"])
	if m := g.node(n["addressCountry"]); m != nil {
		country = cmp.Or(text(m["name"]), text(m["identifier"]))
	}
	return address{
		street:     text(n["streetAddress"]),
		postalCode: text(n["postalCode"]),
		locality:   text(n["addressLocality"]),
		region:     text(n["addressRegion"]),
		country:    country,
	}
}

// coordinates reads geo (GeoCoordinates) or latitude/longitude on the
// place itself; numbers may be written as strings.
func (g graph) coordinates(n map[string]any) *domain.Coordinates {
	src := n
	if geo := g.node(n["geo"]); geo != nil {
		src = geo
	}
	lat, okLat := number(src["latitude"])
	lng, okLng := number(src["longitude"])
	if !okLat || !okLng || lat < -90 || lat > 90 || lng < -180 || lng > 180 || lat == 0 && lng == 0 {
		return nil
	}
	return &domain.Coordinates{Lat: lat, Lng: lng}
}

func number(v any) (float64, bool) {
	switch t := v.(type) {
	case float64:
		return t, !math.IsNaN(t) && !math.IsInf(t, 0)
	case string:
		f, err := strconv.ParseFloat(strings.TrimSpace(t), 64)
		return f, err == nil && !math.IsNaN(f) && !math.IsInf(f, 0)
	case []any:
		if len(t) > 0 {
			return number(t[0])
		}
	case map[string]any:
		return number(t["@value"])
	}
	return 0, false
}

// capacity reads maximumAttendeeCapacity and remainingAttendeeCapacity;
// a sold-out offer says none remain.
func (g graph) capacity(n map[string]any) *domain.Capacity {
	c := &domain.Capacity{}
	if total, ok := number(n["maximumAttendeeCapacity"]); ok && total >= 0 && total < math.MaxInt32 {
		t := int(total)
		c.Total = &t
	}
	if left, ok := number(n["remainingAttendeeCapacity"]); ok && left >= 0 && left < math.MaxInt32 {
		l := int(left)
		c.Available = &l
	}
	if c.Available == nil {
		for _, o := range g.list(n["offers"]) {
			if m, ok := o.(map[string]any); ok && strings.HasSuffix(text(m["availability"]), "SoldOut") {
				zero := 0
				c.Available = &zero
			}
		}
	}
	if c.Total == nil && c.Available == nil {
		return nil
	}
	return c
}

// organizer reads the first organiser (Organization or Person).
func (g graph) organizer(v any) *domain.Organizer {
	for _, e := range g.list(v) {
		switch t := e.(type) {
		case string:
			if s := extract.Clean(t); s != "" {
				return &domain.Organizer{Name: s}
			}
		case map[string]any:
			name := text(t["name"])
			if name == "" {
				continue
			}
			contact := strings.TrimPrefix(text(t["email"]), "mailto:")
			return &domain.Organizer{Name: name, URL: g.url(t["url"]), Contact: cmp.Or(contact, text(t["telephone"]))}
		}
	}
	return nil
}

// images reads every image: URLs, ImageObjects or references to them.
func (g graph) images(v any) []string {
	var out []string
	for _, e := range g.list(v) {
		if u := extract.Resolve(g.base, extract.LDImage(e, g.ids, 0)); u != "" {
			out = append(out, u)
		}
	}
	return dedupe(out)
}
