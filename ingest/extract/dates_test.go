package extract

import (
	"testing"
	"time"
)

func TestParseDate(t *testing.T) {
	at := func(y int, mo time.Month, d, h, mi, s, ns int) time.Time {
		return time.Date(y, mo, d, h, mi, s, ns, time.UTC)
	}
	tests := []struct {
		name string
		in   string
		want time.Time
	}{
		{"RFC 3339 in UTC", "2024-05-03T08:15:30Z", at(2024, 5, 3, 8, 15, 30, 0)},
		{"RFC 3339 with an offset converts to UTC", "2024-05-03T08:15:30+02:00", at(2024, 5, 3, 6, 15, 30, 0)},
		{"RFC 3339 with fractional seconds", "2024-05-03T08:15:30.250Z", at(2024, 5, 3, 8, 15, 30, 250e6)},
		{"offset without a colon", "2024-05-03T08:15:30-0500", at(2024, 5, 3, 13, 15, 30, 0)},
		{"fractional seconds and offset without a colon", "2024-05-03T08:15:30.000+0000", at(2024, 5, 3, 8, 15, 30, 0)},
		{"hour-only offset", "2024-05-03T08:15:30+02", at(2024, 5, 3, 6, 15, 30, 0)},
		{"W3C datetime without seconds", "2024-05-03T08:15+01:00", at(2024, 5, 3, 7, 15, 0, 0)},
		{"no zone is UTC", "2024-05-03T08:15:30", at(2024, 5, 3, 8, 15, 30, 0)},
		{"space separated with zone name", "2024-05-03 08:15:30 UTC", at(2024, 5, 3, 8, 15, 30, 0)},
		{"RFC 1123", "Fri, 03 May 2024 08:15:30 GMT", at(2024, 5, 3, 8, 15, 30, 0)},
		{"RFC 1123 with numeric zone", "Fri, 03 May 2024 08:15:30 +0100", at(2024, 5, 3, 7, 15, 30, 0)},
		{"RFC 822 style single-digit day", "Fri, 3 May 2024 08:15:30 -0700", at(2024, 5, 3, 15, 15, 30, 0)},
		{"US zone abbreviation is applied", "Fri, 03 May 2024 08:15:30 EST", at(2024, 5, 3, 13, 15, 30, 0)},
		{"date only", "2024-05-03", at(2024, 5, 3, 0, 0, 0, 0)},
		{"compact date", "20240503", at(2024, 5, 3, 0, 0, 0, 0)},
		{"written date", "May 3, 2024", at(2024, 5, 3, 0, 0, 0, 0)},
		{"written European date", "3 May 2024", at(2024, 5, 3, 0, 0, 0, 0)},
		{"Unix seconds", "1714724130", at(2024, 5, 3, 8, 15, 30, 0)},
		{"Unix milliseconds", "1714724130000", at(2024, 5, 3, 8, 15, 30, 0)},
		{"surrounding whitespace is ignored", "  2024-05-03T08:15:30Z\n", at(2024, 5, 3, 8, 15, 30, 0)},
		{"garbage is zero", "yesterday", time.Time{}},
		{"empty is zero", "", time.Time{}},
		{"placeholder year is zero", "0001-01-01T00:00:00Z", time.Time{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ParseDate(tt.in)
			if !got.Equal(tt.want) {
				t.Fatalf("ParseDate(%q) = %v, want %v", tt.in, got, tt.want)
			}
			if !got.IsZero() && got.Location() != time.UTC {
				t.Errorf("location = %v, want UTC", got.Location())
			}
		})
	}
}

func TestParseDateInKeepsWhatTheStringSaid(t *testing.T) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		in       string
		want     time.Time
		wantKind DateKind
	}{
		{"an offset is an instant anywhere", "2024-10-29T19:00:00+01:00", time.Date(2024, 10, 29, 18, 0, 0, 0, time.UTC), ZonedDateTime},
		{"UTC is an instant anywhere", "2024-10-29T18:00:00Z", time.Date(2024, 10, 29, 18, 0, 0, 0, time.UTC), ZonedDateTime},
		{"a wall-clock time is read in the given zone, summer time", "2024-10-22T19:00:00", time.Date(2024, 10, 22, 17, 0, 0, 0, time.UTC), LocalDateTime},
		{"a wall-clock time is read in the given zone, winter time", "2024-10-29T19:00", time.Date(2024, 10, 29, 18, 0, 0, 0, time.UTC), LocalDateTime},
		{"a date alone is local midnight", "2024-06-07", time.Date(2024, 6, 6, 22, 0, 0, 0, time.UTC), DateOnly},
		{"a written date alone is local midnight", "7 June 2024", time.Date(2024, 6, 6, 22, 0, 0, 0, time.UTC), DateOnly},
		{"garbage is no date", "next Tuesday", time.Time{}, NoDate},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, kind := ParseDateIn(tt.in, berlin)
			if kind != tt.wantKind || !got.Equal(tt.want) {
				t.Errorf("ParseDateIn(%q) = %v (%v), want %v (%v)", tt.in, got, kind, tt.want, tt.wantKind)
			}
		})
	}
}
