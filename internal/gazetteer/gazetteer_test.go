package gazetteer

import (
	"math"
	"testing"
)

func TestNearestNamesTheCityAPointIsIn(t *testing.T) {
	tests := []struct {
		name       string
		lat, lng   float64
		maxKm      float64
		wantCity   string
		wantZone   string
		wantFound  bool
		wantWithin float64
	}{
		{"a point in central Berlin", 52.5200, 13.4050, 30, "Berlin", "Europe/Berlin", true, 2},
		{"a point in Manhattan", 40.7580, -73.9855, 30, "Manhattan", "America/New_York", true, 5},
		{"a point in the middle of the Atlantic has no city", 30.0, -40.0, 50, "", "", false, 0},
		{"a point near the antimeridian in Fiji", -18.1416, 178.4419, 30, "Suva", "Pacific/Fiji", true, 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, km, ok := Nearest(tt.lat, tt.lng, tt.maxKm)
			if ok != tt.wantFound || c.Name != tt.wantCity || c.Timezone != tt.wantZone {
				t.Fatalf("Nearest = %+v, %.1f km, %v", c, km, ok)
			}
			if ok && km > tt.wantWithin {
				t.Errorf("distance %.1f km, want within %.0f", km, tt.wantWithin)
			}
		})
	}
}

func TestLookupFindsCitiesByTheirWrittenNames(t *testing.T) {
	tests := []struct {
		name, city, country string
		wantZone            string
		wantFound           bool
	}{
		{"a plain name", "Berlin", "", "Europe/Berlin", true},
		{"a name with a postal code", "10115 Berlin", "DE", "Europe/Berlin", true},
		{"accents and case are ignored", "zurich", "CH", "Europe/Zurich", true},
		{"the most populous of a shared name wins", "Portland", "", "America/Los_Angeles", true},
		{"the country narrows a shared name", "Portland", "US", "America/Los_Angeles", true},
		{"a name in the wrong country is not found", "Berlin", "FR", "", false},
		{"a village is not in the gazetteer", "Kleinkleckersdorf", "", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, ok := Lookup(tt.city, tt.country)
			if ok != tt.wantFound || c.Timezone != tt.wantZone {
				t.Errorf("Lookup(%q, %q) = %+v, %v", tt.city, tt.country, c, ok)
			}
		})
	}
}

func TestCountriesAreKnownByCodeAndName(t *testing.T) {
	tests := []struct{ in, wantCode, wantName string }{
		{"DE", "DE", "Germany"},
		{"Germany", "DE", "Germany"},
		{"Deutschland", "DE", "Germany"},
		{"France", "FR", "France"},
		{"USA", "US", "United States"},
		{"Atlantis", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			code := CountryCode(tt.in)
			if code != tt.wantCode || CountryName(code) != tt.wantName {
				t.Errorf("CountryCode(%q) = %q (%q)", tt.in, code, CountryName(code))
			}
		})
	}
	if z := CountryZone("DE"); z != "Europe/Berlin" {
		t.Errorf("CountryZone(DE) = %q", z)
	}
	if z := CountryZone("US"); z != "" {
		t.Errorf("CountryZone(US) = %q, want none: the US has several", z)
	}
}

func TestDistanceKm(t *testing.T) {
	// Berlin to Paris is about 878 km.
	if d := DistanceKm(52.52, 13.405, 48.8566, 2.3522); math.Abs(d-878) > 5 {
		t.Errorf("Berlin-Paris = %.0f km", d)
	}
}

// BenchmarkLoad measures reading the embedded data, which the first
// lookup pays once. Run: go test ./gazetteer -run '^$' -bench . -cpu 1
func BenchmarkLoad(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := parse(citiesGz); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkNearest(b *testing.B) {
	load()
	for b.Loop() {
		Nearest(52.52, 13.405, 50)
	}
}

func TestACityKnowsTheRegionItLiesIn(t *testing.T) {
	tests := []struct {
		name, city, country, wantRegion string
	}{
		{"a German city is in its Land", "Munich", "DE", "Bavaria"},
		{"an American city is in its state", "Boston", "US", "Massachusetts"},
		{"an English town of the same name is in England", "Boston", "GB", "England"},
		{"a French city is in its région", "Lyon", "FR", "Auvergne-Rhône-Alpes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, ok := Lookup(tt.city, tt.country)
			if !ok || c.Region != tt.wantRegion {
				t.Errorf("Lookup(%q, %q) = %+v, %v; want region %q", tt.city, tt.country, c, ok, tt.wantRegion)
			}
		})
	}
}
