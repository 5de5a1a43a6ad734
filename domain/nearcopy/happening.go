package nearcopy

import (
	"math"
	"slices"
	"strings"
	"time"
)

// Listing is what is compared of a happening as one source lists it.
type Listing struct {
	Title string
	Start time.Time
	// Venue is the place's name; Address its street address, if given.
	Venue   string
	Address string
	// HasGeo says Lat and Lon are set.
	HasGeo   bool
	Lat, Lon float64
}

const (
	// StartSlack is how far apart two listings' starts may be and still be
	// one happening (one site says doors, another the show, rounded).
	StartSlack = 0 * time.Minute
	// NearMetres is how close two places given by coordinates must be to
	// be one.
	NearMetres = 250
)

// SameHappening decides whether two listings are one happening: the same
// start, the same place (the same venue name or address, or coordinates
// within NearMetres, else venue names or addresses sharing three
// quarters of their words), and the same or a close title: the words of
// one title all in the other, leaving out years and words such as
// "live" or "concert" (sameEventTitle). Two concerts one night at one
// venue differ in their titles or their starts.
func SameHappening(a, b Listing) bool {
	if a.Start.IsZero() || b.Start.IsZero() {
		return false
	}
	d := a.Start.Sub(b.Start)
	if d < 0 {
		d = -d
	}
	if d > StartSlack {
		return false
	}
	if !samePlace(a, b) {
		return false
	}
	return sameEventTitle(a.Title, b.Title)
}

// eventWords are words a listing adds to a happening's name that do not
// tell one happening from another.
var eventWords = map[string]bool{
	"live": true, "concert": true, "tickets": true, "ticket": true, "presents": true, "show": true, "gig": true,
	"performance": true, "event": true, "jazz": true, "music": true, "tour": true, "in": true, "at": true,
}

// sameEventTitle: two titles name one happening when, without the words
// of eventWords and years, the words of one are all in the other.
func sameEventTitle(a, b string) bool {
	wa, wb := eventTitleWords(a), eventTitleWords(b)
	if len(wa) == 0 || len(wb) == 0 {
		return false
	}
	if len(wb) < len(wa) {
		wa, wb = wb, wa
	}
	for _, w := range wa {
		if !slices.Contains(wb, w) {
			return false
		}
	}
	return true
}

func eventTitleWords(t string) []string {
	var out []string
	for _, w := range titleWords(t) {
		if eventWords[w] || len(w) == 4 && w >= "1900" && w <= "2199" && strings.Trim(w, "0123456789") == "" {
			continue
		}
		out = append(out, w)
	}
	return out
}

func samePlace(a, b Listing) bool {
	if a.HasGeo && b.HasGeo {
		return metres(a.Lat, a.Lon, b.Lat, b.Lon) <= NearMetres
	}
	if va, vb := titleWords(a.Venue), titleWords(b.Venue); len(va) > 0 && len(vb) > 0 && TitleOverlap(a.Venue, b.Venue) >= 0.75 {
		return true
	}
	if a.Address != "" && b.Address != "" && TitleOverlap(a.Address, b.Address) >= 0.75 {
		return true
	}
	return false
}

// metres is the great-circle distance between two points.
func metres(lat1, lon1, lat2, lon2 float64) float64 {
	const r = 6371000
	rad := math.Pi / 180
	dlat, dlon := (lat2-lat1)*rad, (lon2-lon1)*rad
	h := math.Sin(dlat/2)*math.Sin(dlat/2) + math.Cos(lat1*rad)*math.Cos(lat2*rad)*math.Sin(dlon/2)*math.Sin(dlon/2)
	return 2 * r * math.Asin(math.Sqrt(h))
}
