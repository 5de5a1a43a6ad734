package calendar

import (
	"cmp"
	"math"
	"strings"

	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/internal/gazetteer"
)

// Scores of geoLocations (see doc.go): how sure the event is at or in a
// place.
const (
	scorePointCoordinates = 100
	scorePointStreet      = 90
	scorePointVenue       = 70
	scoreLocality         = 80
	scoreRegion           = 50
	scoreCountry          = 30
	// nearbyKm: a point further than this from every gazetteer city names
	// no locality.
	nearbyKm = 50
	// scoreNearbyFloor is a gazetteer locality's score at nearbyKm; it
	// rises linearly to scoreLocality at the city's centre.
	scoreNearbyFloor = 40
)

// completeFromCoordinates names the locality, region and country of a
// place whose address lacks them from its coordinates, with the gazetteer; it returns
// the locality's score: scoreLocality when the address named it.
func completeFromCoordinates(where *domain.Location) int {
	if where == nil || where.Coordinates == nil {
		return scoreLocality
	}
	c, km, ok := gazetteer.Nearest(where.Coordinates.Lat, where.Coordinates.Lng, nearbyKm)
	if !ok {
		return scoreLocality
	}
	if where.Country == "" {
		where.Country = gazetteer.CountryName(c.Country)
	}
	// The region is the city's only when the address does not place the
	// event in another country (a point near a border).
	if where.Region == "" && gazetteer.CountryCode(where.Country) == c.Country {
		where.Region = c.Region
	}
	if where.Locality != "" {
		return scoreLocality
	}
	where.Locality = c.Name
	return scoreLocality - int(math.Round(float64(scoreLocality-scoreNearbyFloor)*km/nearbyKm))
}

// approximate gives a place without coordinates those of the locality
// its address names, when the gazetteer knows it, so that geographic
// relevance ranks the event near its true distance; the event's own
// coordinates stay unknown (domain.Location.ApproximateCoordinates).
func approximate(where *domain.Location) {
	if where == nil || where.Coordinates != nil || where.Locality == "" {
		return
	}
	if c, ok := gazetteer.Lookup(where.Locality, gazetteer.CountryCode(where.Country)); ok {
		where.ApproximateCoordinates = &domain.Coordinates{Lat: c.Lat, Lng: c.Lng}
	}
}

// geoLocations: a LOCATION for a concrete place (coordinates, a street
// address or a venue name), and a RELEVANCE_REGION for each of its
// locality, region and country.
func geoLocations(where *domain.Location, localityScore int) []domain.GeoLocation {
	out := []domain.GeoLocation{}
	if where == nil {
		return out
	}
	if desc, score := point(where); desc != "" {
		out = append(out, domain.GeoLocation{Description: desc, RelationType: domain.GeoLocationPoint, Score: score})
	}
	seen := map[string]bool{}
	for _, r := range []struct {
		name  string
		score int
	}{{where.Locality, localityScore}, {where.Region, scoreRegion}, {where.Country, scoreCountry}} {
		key := gazetteer.Fold(r.name)
		if key == "" || seen[key] {
			continue
		}
		seen[key] = true
		out = append(out, domain.GeoLocation{Description: r.name, RelationType: domain.GeoRelevanceRange, Score: r.score})
	}
	return out
}

func point(where *domain.Location) (string, int) {
	venue, street := "", ""
	if where.Venue != nil {
		venue, street = where.Venue.Name, where.Venue.Address
	}
	desc := cmp.Or(where.DisplayAddress, joinNonEmpty(", ", venue, street, where.Locality))
	switch {
	case where.Coordinates != nil:
		return cmp.Or(desc, formatCoordinates(where.Coordinates)), scorePointCoordinates
	case street != "":
		return desc, scorePointStreet
	case venue != "":
		return desc, scorePointVenue
	}
	return "", 0
}

func formatCoordinates(c *domain.Coordinates) string {
	return strings.TrimRight(strings.TrimRight(ftoa(c.Lat), "0"), ".") + ", " + strings.TrimRight(strings.TrimRight(ftoa(c.Lng), "0"), ".")
}
