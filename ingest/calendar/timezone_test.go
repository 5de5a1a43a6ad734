package calendar

import (
	"testing"

	"github.com/ringsaturn/tzf"
)

func TestZonesFromCoordinates(t *testing.T) {
	tests := []struct {
		name     string
		lat, lng float64
		want     string
	}{
		{"Berlin", 52.52, 13.405, "Europe/Berlin"},
		{"Büsingen, a German town in Swiss time", 47.6969, 8.6903, "Europe/Busingen"},
		{"Indianapolis", 39.7684, -86.1581, "America/Indiana/Indianapolis"},
		{"Adelaide, half an hour off", -34.9285, 138.6007, "Australia/Adelaide"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := zoneAt(tt.lat, tt.lng); got == nil || got.String() != tt.want {
				t.Errorf("zoneAt = %v, want %s", got, tt.want)
			}
		})
	}
}

func TestOffsetZones(t *testing.T) {
	tests := []struct {
		seconds int
		want    string
	}{
		{2 * 3600, "Etc/GMT-2"}, {-5 * 3600, "Etc/GMT+5"}, {0, "UTC"}, {5*3600 + 1800, ""},
	}
	for _, tt := range tests {
		name := ""
		if got := offsetZone(tt.seconds); got != nil {
			name = got.String()
		}
		if name != tt.want {
			t.Errorf("offsetZone(%d) = %q, want %q (empty: no whole-hour zone)", tt.seconds, name, tt.want)
		}
	}
}

// BenchmarkZoneFinderBuild measures what the first event with coordinates
// but no zone pays, once per process.
// Run: go test ./extract/events -run '^$' -bench ZoneFinderBuild -benchtime 3x -cpu 1
func BenchmarkZoneFinderBuild(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := tzf.NewDefaultFinder(); err != nil {
			b.Fatal(err)
		}
	}
}
