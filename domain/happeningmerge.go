package domain

import (
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
)

// Precedence of a listing as the word on a happening, for when two say
// different things about it: the happening's own page over a page that
// lists it among others, over a calendar file, which carries less (no
// images, offers or capacity). The extractor ranks the documents that
// hold one happening by it (ingest/calendar.Precedence); an event item
// whose happening other sources list too merges their details by it
// (MergeHappenings).
const (
	PrecedenceCalendar = 1
	PrecedenceListing  = 2
	PrecedenceOwnPage  = 3
)

// Precedence ranks the listing d by the extractor's rule: the rank the
// crawl recorded with it (Rank) or, for details recorded before it was
// kept, the rule read off the details (the document is not in the log):
// an iCalendar UID as its identity, or a source page ending in .ics, is a
// calendar; an identity that is the source page's own address is the
// happening's own page; anything else a listing. (A calendar file at an
// address without .ics whose entries name their pages is then taken for a
// listing.)
func (d HappeningDetails) Precedence() int {
	switch {
	case d.Rank > 0:
		return d.Rank
	case strings.HasPrefix(d.Identity, "uid:") || isCalendarAddress(d.Source.URL):
		return PrecedenceCalendar
	case d.Source.URL != "" && strings.HasPrefix(d.Identity, "url:") && sameAddress(strings.TrimPrefix(d.Identity, "url:"), d.Source.URL):
		return PrecedenceOwnPage
	default:
		return PrecedenceListing
	}
}

func isCalendarAddress(raw string) bool {
	u, err := url.Parse(raw)
	if err != nil {
		return false
	}
	p := strings.ToLower(u.Path)
	return strings.HasSuffix(p, ".ics") || strings.HasSuffix(p, ".ical") || strings.HasSuffix(p, ".ifb")
}

// sameAddress compares two addresses as the extractor's identities do:
// scheme and host in any case, no fragment, no trailing slash.
func sameAddress(a, b string) bool {
	norm := func(raw string) string {
		u, err := url.Parse(strings.TrimSpace(raw))
		if err != nil {
			return raw
		}
		u.Scheme, u.Host, u.Fragment, u.RawFragment = strings.ToLower(u.Scheme), strings.ToLower(u.Host), "", ""
		if len(u.Path) > 1 {
			u.Path = strings.TrimRight(u.Path, "/")
		}
		return u.String()
	}
	return norm(a) == norm(b)
}

// MergedHappeningID is the id of the merged listing of an event item that
// other sources list too: the read models store it beside the happenings
// every feed shares, and render the item from it.
func MergedHappeningID(itemID uuid.UUID) uuid.UUID {
	return uuid.NewSHA1(itemID, []byte("merged"))
}

// MergeHappenings is one happening as several sources list it: own is the
// item's happening (the first listing found), copies the others, in the
// order they were found. The listing of highest Precedence (the earliest
// found among equals) gives the happening's text, time block, place and
// the rest; what it leaves out, the others fill in, in that order. The
// occurrences are the union of all of theirs: an instance of another
// listing whose first occurrence starts when no instance already has one
// is added. Addresses, images and geo locations are the union too. The
// identity and the source block stay the item's own (its sourceId and
// source are where it was found first).
func MergeHappenings(own HappeningDetails, copies ...HappeningDetails) HappeningDetails {
	if len(copies) == 0 {
		return own
	}
	ordered := append([]HappeningDetails{own}, copies...)
	slices.SortStableFunc(ordered, func(a, b HappeningDetails) int { return b.Precedence() - a.Precedence() })
	m := ordered[0]
	m.Identity, m.Source = own.Identity, own.Source
	m.Instances = slices.Clone(m.Instances)
	m.Location = cloneLocation(m.Location)
	m.URLs = union(slices.Clone(m.URLs), []string{m.PrimaryURL}, maxHappeningURLs)
	m.SupportingImages, m.GeoLocations = slices.Clone(m.SupportingImages), slices.Clone(m.GeoLocations)
	for _, o := range ordered[1:] {
		fillText(&m.Description, o.Description)
		fillText(&m.ShortDescription, o.ShortDescription)
		fillText(&m.PrimaryImage, o.PrimaryImage)
		fillText(&m.PrimaryURL, o.PrimaryURL)
		if m.PublishedAt == nil {
			m.PublishedAt = o.PublishedAt
		}
		if m.ModifiedAt == nil {
			m.ModifiedAt = o.ModifiedAt
		}
		if m.Capacity == nil {
			m.Capacity = o.Capacity
		}
		if m.Organizer == nil {
			m.Organizer = o.Organizer
		}
		m.Location = fillLocation(m.Location, o.Location)
		m.URLs = union(m.URLs, append([]string{o.PrimaryURL}, o.URLs...), maxHappeningURLs)
		m.SupportingImages = union(m.SupportingImages, o.SupportingImages, maxHappeningURLs)
		for _, g := range o.GeoLocations {
			if !slices.ContainsFunc(m.GeoLocations, func(h GeoLocation) bool {
				return h.RelationType == g.RelationType && h.Description == g.Description
			}) {
				m.GeoLocations = append(m.GeoLocations, g)
			}
		}
		m.Instances = unionInstances(m.Instances, o.Instances)
	}
	return m
}

func fillText(dst *string, s string) {
	if *dst == "" {
		*dst = s
	}
}

func union(a, b []string, limit int) []string {
	for _, s := range b {
		if len(a) >= limit {
			break
		}
		if s != "" && !slices.Contains(a, s) {
			a = append(a, s)
		}
	}
	return a
}

func cloneLocation(l *Location) *Location {
	if l == nil {
		return nil
	}
	c := *l
	return &c
}

func fillLocation(m, o *Location) *Location {
	if o == nil {
		return m
	}
	if m == nil {
		return cloneLocation(o)
	}
	if m.Venue == nil {
		m.Venue = o.Venue
	}
	if m.Coordinates == nil {
		m.Coordinates = o.Coordinates
	}
	if m.Online == nil {
		m.Online = o.Online
	}
	fillText(&m.DisplayAddress, o.DisplayAddress)
	fillText(&m.Locality, o.Locality)
	fillText(&m.Region, o.Region)
	fillText(&m.Country, o.Country)
	if m.Coordinates == nil && m.ApproximateCoordinates == nil {
		m.ApproximateCoordinates = o.ApproximateCoordinates
	}
	if m.Coordinates != nil {
		m.ApproximateCoordinates = nil
	}
	return m
}

// unionInstances adds to have the instances of more whose first
// occurrence starts when none of have's does, in start order.
func unionInstances(have, more []HappeningInstance) []HappeningInstance {
	starts := map[time.Time]bool{}
	for _, in := range have {
		for _, o := range in.Occurrences {
			starts[o.Start.UTC()] = true
		}
	}
	added := false
	for _, in := range more {
		if len(have) >= maxHappeningInstances || len(in.Occurrences) == 0 || starts[in.Occurrences[0].Start.UTC()] {
			continue
		}
		for _, o := range in.Occurrences {
			starts[o.Start.UTC()] = true
		}
		have, added = append(have, in), true
	}
	if added {
		slices.SortStableFunc(have, func(a, b HappeningInstance) int {
			return firstStart(a).Compare(firstStart(b))
		})
	}
	return have
}

func firstStart(in HappeningInstance) time.Time {
	if len(in.Occurrences) == 0 {
		return time.Time{}
	}
	return in.Occurrences[0].Start
}
