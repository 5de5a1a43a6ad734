package extract

import (
	"strconv"
	"strings"
	"sync"
	"time"
)

// zones caches loaded zones by name: time.LoadLocation reads the zone
// file each time, and every page or event that names a zone asks. Only
// real zones are kept, so the cache is bounded by the zone database,
// whatever names pages make up.
var zones sync.Map

// LoadZone is the IANA zone of that name, or nil when there is none.
func LoadZone(name string) *time.Location {
	if name == "" || name == "Local" || len(name) > 64 {
		return nil
	}
	if loc, ok := zones.Load(name); ok {
		return loc.(*time.Location)
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil
	}
	zones.Store(name, loc)
	return loc
}

// parseZone reads a declared time zone: an IANA name (Europe/Berlin) or a
// UTC offset (+02:00, +0200, UTC+2, GMT-05:30). Nil when it is neither.
func parseZone(s string) *time.Location {
	s = strings.TrimSpace(s)
	if loc := LoadZone(s); loc != nil {
		return loc
	}
	u := strings.ToUpper(s)
	for _, prefix := range []string{"UTC", "GMT"} {
		u = strings.TrimPrefix(u, prefix)
	}
	if u == "" && s != "" {
		return time.UTC
	}
	secs, ok := parseOffset(u)
	if !ok {
		return nil
	}
	return time.FixedZone("UTC"+u, secs)
}

// parseOffset reads ±h, ±hh, ±hh:mm or ±hhmm as seconds east of UTC.
func parseOffset(s string) (int, bool) {
	if len(s) < 2 || (s[0] != '+' && s[0] != '-') {
		return 0, false
	}
	sign, digits := 1, strings.Replace(s[1:], ":", "", 1)
	if s[0] == '-' {
		sign = -1
	}
	var h, m string
	switch len(digits) {
	case 1, 2:
		h = digits
	case 4:
		h, m = digits[:2], digits[2:]
	default:
		return 0, false
	}
	hours, err := strconv.Atoi(h)
	if err != nil || hours > 14 {
		return 0, false
	}
	minutes := 0
	if m != "" {
		if minutes, err = strconv.Atoi(m); err != nil || minutes > 59 {
			return 0, false
		}
	}
	return sign * (hours*3600 + minutes*60), true
}
