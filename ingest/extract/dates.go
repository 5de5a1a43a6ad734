package extract

import (
	"strconv"
	"strings"
	"time"
)

// dateLayouts lists the layouts ParseDate tries, most common first. Go's
// parser accepts fractional seconds after the seconds field even when the
// layout has none, so each layout also covers its fractional variant.
var dateLayouts = []string{
	time.RFC3339,
	"2006-01-02T15:04:05Z0700",
	"2006-01-02T15:04:05Z07",
	"2006-01-02T15:04Z07:00",
	"2006-01-02T15:04Z0700",
	"2006-01-02T15:04:05",
	"2006-01-02T15:04",
	"2006-01-02 15:04:05Z07:00",
	"2006-01-02 15:04:05Z0700",
	"2006-01-02 15:04:05 Z07:00",
	"2006-01-02 15:04:05 -0700",
	"2006-01-02 15:04:05 MST",
	"2006-01-02 15:04:05",
	"2006-01-02 15:04",
	"Mon, 2 Jan 2006 15:04:05 -0700",
	"Mon, 2 Jan 2006 15:04:05 MST",
	"Mon, 2 Jan 2006 15:04 -0700",
	"Mon, 2 Jan 2006 15:04 MST",
	"Monday, 2 Jan 2006 15:04:05 -0700",
	"Monday, 2 Jan 2006 15:04:05 MST",
	"2 Jan 2006 15:04:05 -0700",
	"2 Jan 2006 15:04:05 MST",
	time.RFC850,
	time.ANSIC,
	time.UnixDate,
	time.RubyDate,
	"2006-01-02",
	"2006/01/02 15:04:05",
	"2006/01/02 15:04",
	"2006/01/02",
	"20060102T150405Z0700",
	"20060102T150405Z",
	"20060102",
	"January 2, 2006 3:04 PM",
	"January 2, 2006 15:04",
	"January 2, 2006",
	"Jan 2, 2006 3:04 PM",
	"Jan 2, 2006",
	"Monday, January 2, 2006",
	"2 January 2006 15:04",
	"2 January 2006",
	"2 Jan 2006",
	"02.01.2006 15:04",
	"02.01.2006",
}

// zoneOffsets gives offsets for zone abbreviations that still appear in
// feeds and meta tags. time.Parse only knows the abbreviations of the local
// zone and silently treats the others as UTC, which would shift such dates
// by hours.
var zoneOffsets = map[string]int{
	"EST": -5 * 3600, "EDT": -4 * 3600,
	"CST": -6 * 3600, "CDT": -5 * 3600,
	"MST": -7 * 3600, "MDT": -6 * 3600,
	"PST": -8 * 3600, "PDT": -7 * 3600,
	"BST": 1 * 3600, "CET": 1 * 3600, "CEST": 2 * 3600,
	"EET": 2 * 3600, "EEST": 3 * 3600, "IST": 5*3600 + 1800,
	"JST": 9 * 3600, "AEST": 10 * 3600, "AEDT": 11 * 3600,
}

// ParseDate parses the date formats found in the wild on news pages, feeds
// and sitemaps (RFC 3339 with or without fractional seconds or a colon in the
// zone, RFC 1123 and its relatives, date-only forms, Unix timestamps) and
// returns the instant in UTC. Dates without a zone are taken as UTC. It
// returns the zero time when s is not a recognisable date, so callers can
// chain sources with a simple IsZero check.
func ParseDate(s string) time.Time {
	t, kind := ParseDateIn(s, time.UTC)
	if kind == NoDate {
		return time.Time{}
	}
	return plausible(t)
}

// DateKind is what a date string said, which decides how it is read.
type DateKind int

const (
	// NoDate: the string is not a recognisable date.
	NoDate DateKind = iota
	// DateOnly: a calendar day without a time, read as midnight in loc.
	DateOnly
	// LocalDateTime: a wall-clock time without a zone, read in loc.
	LocalDateTime
	// ZonedDateTime: a time with a zone or offset, an instant anywhere.
	ZonedDateTime
)

// ParseDateIn parses what ParseDate parses, keeping what the string said:
// a date-time with a zone or offset is that instant, one without it is a
// wall-clock time in loc, and a date alone is midnight in loc. Events
// need the difference: "19:00" on an event page means 19:00 where the
// event is, and a date alone is an all-day event.
func ParseDateIn(s string, loc *time.Location) (time.Time, DateKind) {
	s = strings.TrimSpace(s)
	if len(s) < 6 || len(s) > 64 {
		return time.Time{}, NoDate
	}
	if t, ok := parseUnix(s); ok {
		if t.IsZero() {
			return t, NoDate
		}
		return t, ZonedDateTime
	}
	for _, layout := range dateLayouts {
		t, err := time.ParseInLocation(layout, s, loc)
		if err != nil {
			continue
		}
		kind := layoutKind(layout)
		if kind == ZonedDateTime {
			t = fixZone(t)
		}
		if t.Year() < 1970 || t.Year() > 2200 {
			return time.Time{}, NoDate
		}
		return t, kind
	}
	return time.Time{}, NoDate
}

func layoutKind(layout string) DateKind {
	switch {
	case strings.Contains(layout, "Z07") || strings.Contains(layout, "-07") ||
		strings.Contains(layout, "MST") || strings.HasSuffix(layout, "Z"):
		return ZonedDateTime
	case strings.Contains(layout, "15") || strings.Contains(layout, "3:04"):
		return LocalDateTime
	default:
		return DateOnly
	}
}

// parseUnix accepts Unix timestamps in seconds or milliseconds, which some
// CMSes put in meta tags.
func parseUnix(s string) (time.Time, bool) {
	if len(s) != 10 && len(s) != 13 {
		return time.Time{}, false
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return time.Time{}, false
	}
	if len(s) == 13 {
		return plausible(time.UnixMilli(n)), true
	}
	return plausible(time.Unix(n, 0)), true
}

// fixZone applies a known offset to a time whose zone abbreviation time.Parse
// did not recognise (it reports such zones with offset 0).
func fixZone(t time.Time) time.Time {
	name, off := t.Zone()
	if off != 0 {
		return t
	}
	o, ok := zoneOffsets[strings.ToUpper(name)]
	if !ok {
		return t
	}
	return time.Date(t.Year(), t.Month(), t.Day(), t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), time.FixedZone(name, o))
}

// plausible rejects dates that cannot be a publication date (placeholders
// such as 0001-01-01 or 1900-01-01) and returns the others in UTC.
func plausible(t time.Time) time.Time {
	if t.Year() < 1970 || t.Year() > 2200 {
		return time.Time{}
	}
	return t.UTC()
}
