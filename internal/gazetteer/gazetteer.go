// Package gazetteer names places offline: the nearest sizeable city to a
// point, a city's coordinates and time zone by its name, and countries'
// names and codes. Its data is GeoNames' selection of places with at
// least 15,000 inhabitants (CC BY 4.0, see README.md), embedded and read
// once, on first use.
package gazetteer

import (
	"bufio"
	"bytes"
	"compress/gzip"
	_ "embed"
	"math"
	"strconv"
	"strings"
	"sync"
	"unicode"

	"golang.org/x/text/language"
	"golang.org/x/text/language/display"
	"golang.org/x/text/unicode/norm"
)

//go:embed cities15000.tsv.gz
var citiesGz []byte

// City is one place of the gazetteer.
type City struct {
	Name string
	// Country is the ISO 3166-1 alpha-2 code.
	Country    string
	Lat, Lng   float64
	Timezone   string
	Population int
	// Region is the first-level administrative division (state, province)
	// the city lies in, as GeoNames names it; empty when unknown.
	Region string
}

type index struct {
	cities []City
	// grid buckets cities by whole degrees, so Nearest looks at the nine
	// cells around a point instead of every city.
	grid map[[2]int][]int32
	// byName lists cities under their folded names, most populous first.
	byName map[string][]int32
	// countryZone is a country's time zone when all its cities share one.
	countryZone map[string]string
}

var load = sync.OnceValue(func() *index {
	idx, err := parse(citiesGz)
	if err != nil {
		// The data is embedded and read by the tests: it cannot fail at run
		// time unless the binary is corrupt, and then no gazetteer is better
		// than a crash.
		return &index{grid: map[[2]int][]int32{}, byName: map[string][]int32{}, countryZone: map[string]string{}}
	}
	return idx
})

func parse(gz []byte) (*index, error) {
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		return nil, err
	}
	idx := &index{grid: map[[2]int][]int32{}, byName: map[string][]int32{}, countryZone: map[string]string{}}
	zones := map[string]map[string]bool{}
	sc := bufio.NewScanner(zr)
	for sc.Scan() {
		f := strings.Split(sc.Text(), "\t")
		if len(f) < 7 {
			continue
		}
		lat, _ := strconv.ParseFloat(f[3], 64)
		lng, _ := strconv.ParseFloat(f[4], 64)
		pop, _ := strconv.Atoi(f[6])
		c := City{Name: f[0], Country: f[2], Lat: lat, Lng: lng, Timezone: f[5], Population: pop}
		if len(f) > 7 {
			c.Region = f[7]
		}
		i := int32(len(idx.cities))
		idx.cities = append(idx.cities, c)
		cell := cellOf(lat, lng)
		idx.grid[cell] = append(idx.grid[cell], i)
		for _, n := range []string{f[0], f[1]} {
			if k := Fold(n); k != "" && (n == f[0] || k != Fold(f[0])) {
				idx.byName[k] = append(idx.byName[k], i)
			}
		}
		if zones[c.Country] == nil {
			zones[c.Country] = map[string]bool{}
		}
		zones[c.Country][c.Timezone] = true
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	for _, list := range idx.byName {
		sortByPopulation(idx.cities, list)
	}
	for cc, zs := range zones {
		if len(zs) == 1 {
			for z := range zs {
				idx.countryZone[cc] = z
			}
		}
	}
	return idx, nil
}

func sortByPopulation(cities []City, list []int32) {
	for i := 1; i < len(list); i++ {
		for j := i; j > 0 && cities[list[j]].Population > cities[list[j-1]].Population; j-- {
			list[j], list[j-1] = list[j-1], list[j]
		}
	}
}

func cellOf(lat, lng float64) [2]int {
	return [2]int{int(math.Floor(lat)), int(math.Floor(lng))}
}

// Nearest is the city closest to a point, with its distance in km, when
// one lies within maxKm (at most about 100 km: only the neighbouring
// one-degree cells are searched).
func Nearest(lat, lng, maxKm float64) (City, float64, bool) {
	idx := load()
	cell := cellOf(lat, lng)
	best, bestKm := int32(-1), math.Inf(1)
	for dy := -1; dy <= 1; dy++ {
		for dx := -1; dx <= 1; dx++ {
			x := cell[1] + dx
			// The grid wraps at the antimeridian.
			if x < -180 {
				x += 360
			} else if x >= 180 {
				x -= 360
			}
			for _, i := range idx.grid[[2]int{cell[0] + dy, x}] {
				c := idx.cities[i]
				if d := DistanceKm(lat, lng, c.Lat, c.Lng); d < bestKm {
					best, bestKm = i, d
				}
			}
		}
	}
	if best < 0 || bestKm > maxKm {
		return City{}, 0, false
	}
	return idx.cities[best], bestKm, true
}

// Lookup finds a city by name (case, accents and a leading postal code
// ignored), in the given country when country is an ISO code; the most
// populous one when several share the name.
func Lookup(name, country string) (City, bool) {
	idx := load()
	for _, i := range idx.byName[Fold(stripPostalCode(name))] {
		if c := idx.cities[i]; country == "" || strings.EqualFold(c.Country, country) {
			return c, true
		}
	}
	return City{}, false
}

// CountryZone is the time zone of a country that has only one (among its
// sizeable cities); empty for countries with several, such as the US.
func CountryZone(country string) string {
	return load().countryZone[strings.ToUpper(country)]
}

// stripPostalCode drops the postal code written before or after a city's
// name ("10115 Berlin", "London SW1A 1AA" is left alone: too varied).
func stripPostalCode(s string) string {
	f := strings.Fields(s)
	for len(f) > 1 && isPostalCode(f[0]) {
		f = f[1:]
	}
	for len(f) > 1 && isPostalCode(f[len(f)-1]) {
		f = f[:len(f)-1]
	}
	return strings.Join(f, " ")
}

func isPostalCode(s string) bool {
	digits := 0
	for _, r := range s {
		if r >= '0' && r <= '9' {
			digits++
		} else if r != '-' {
			return false
		}
	}
	return digits >= 3
}

// Fold is the form names are compared in: lower case, without accents and
// punctuation, spaces collapsed. It runs for every name of every event,
// so it allocates once and skips normalising plain ASCII.
func Fold(s string) string {
	if !isASCII(s) {
		s = norm.NFD.String(s)
	}
	var b strings.Builder
	b.Grow(len(s))
	gap := false
	for _, r := range s {
		switch {
		case unicode.Is(unicode.Mn, r):
		case r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 127 && unicode.IsLetter(r) || r > 127 && unicode.IsDigit(r):
			if gap && b.Len() > 0 {
				b.WriteByte(' ')
			}
			b.WriteRune(unicode.ToLower(r))
			gap = false
		case r >= 'A' && r <= 'Z':
			if gap && b.Len() > 0 {
				b.WriteByte(' ')
			}
			b.WriteByte(byte(r) + 'a' - 'A')
			gap = false
		default:
			gap = true
		}
	}
	return norm.NFC.String(b.String())
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// DistanceKm is the great-circle distance between two points.
func DistanceKm(lat1, lng1, lat2, lng2 float64) float64 {
	const earthKm = 6371.0
	rad := math.Pi / 180
	dLat := (lat2 - lat1) * rad
	dLng := (lng2 - lng1) * rad
	a := math.Sin(dLat/2)*math.Sin(dLat/2) + math.Cos(lat1*rad)*math.Cos(lat2*rad)*math.Sin(dLng/2)*math.Sin(dLng/2)
	return 2 * earthKm * math.Asin(math.Min(1, math.Sqrt(a)))
}

// countryLanguages are the languages whose country names CountryCode
// understands: English and the languages most event pages are in.
var countryLanguages = []language.Tag{language.English, language.German, language.French, language.Spanish, language.Italian, language.Dutch, language.Portuguese}

var countryCodes = sync.OnceValue(func() map[string]string {
	m := map[string]string{}
	for cc := range load().countryCodes() {
		r, err := language.ParseRegion(cc)
		if err != nil {
			continue
		}
		for _, l := range countryLanguages {
			if n := display.Regions(l).Name(r); n != "" {
				m[Fold(n)] = cc
			}
		}
	}
	// Common names the CLDR does not use.
	for n, cc := range map[string]string{"usa": "US", "united states of america": "US", "uk": "GB", "great britain": "GB", "england": "GB", "scotland": "GB", "wales": "GB"} {
		m[n] = cc
	}
	return m
})

func (idx *index) countryCodes() map[string]bool {
	out := map[string]bool{}
	for _, c := range idx.cities {
		out[c.Country] = true
	}
	return out
}

// CountryCode is the ISO 3166-1 alpha-2 code of a country given by its
// code or by its name in one of the common languages; empty when unknown.
func CountryCode(s string) string {
	s = strings.TrimSpace(s)
	if len(s) == 2 {
		if r, err := language.ParseRegion(s); err == nil && r.IsCountry() {
			return strings.ToUpper(s)
		}
	}
	return countryCodes()[Fold(s)]
}

// CountryName is the English name of the country with an ISO code.
func CountryName(code string) string {
	r, err := language.ParseRegion(code)
	if err != nil || !r.IsCountry() {
		return ""
	}
	return display.English.Regions().Name(r)
}
