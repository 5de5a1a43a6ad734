package calendar

import (
	"reflect"
	"testing"

	"github.com/feedsvc/feedsvc/domain"
)

func TestAPlaceKnownByItsCoordinatesIsPlacedInItsCityRegionAndCountry(t *testing.T) {
	tests := []struct {
		name  string
		where domain.Location
		want  []string // the RELEVANCE_REGION descriptions, in order
	}{
		{"coordinates alone name the city, its Land and the country",
			domain.Location{Coordinates: &domain.Coordinates{Lat: 48.1374, Lng: 11.5755}},
			[]string{"Munich", "Bavaria", "Germany"}},
		{"an American point is in its state",
			domain.Location{Coordinates: &domain.Coordinates{Lat: 42.3601, Lng: -71.0589}},
			[]string{"Boston", "Massachusetts", "United States"}},
		{"a region the address names is kept",
			domain.Location{Coordinates: &domain.Coordinates{Lat: 48.1374, Lng: 11.5755}, Region: "Oberbayern"},
			[]string{"Munich", "Oberbayern", "Germany"}},
		{"an address in another country than the nearest city takes no region from it",
			domain.Location{Coordinates: &domain.Coordinates{Lat: 47.5596, Lng: 7.5886}, Locality: "Weil am Rhein", Country: "Germany"},
			[]string{"Weil am Rhein", "Germany"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			where := tt.where
			score := completeFromCoordinates(&where)
			var got []string
			for _, g := range geoLocations(&where, score) {
				if g.RelationType == domain.GeoRelevanceRange {
					got = append(got, g.Description)
				}
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("relevance regions = %q, want %q", got, tt.want)
			}
		})
	}
}
