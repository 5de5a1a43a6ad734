package calendar

import (
	"strings"
	"time"

	"github.com/emersion/go-ical"

	"github.com/feedsvc/feedsvc/ingest/extract"
)

// resolveTZID maps a TZID to an IANA zone: the name itself; its last two
// path segments (producers prefix their own paths, "/mozilla.org/
// 20050126_1/Europe/Berlin"); the VTIMEZONE's X-LIC-LOCATION; a Windows
// zone name (windowszones.go, the CLDR's table); else the whole-hour
// offset of the VTIMEZONE's standard time.
// nil when none of those names a zone.
func resolveTZID(tzid string, vtz *ical.Component) *time.Location {
	tzid = strings.Trim(strings.TrimSpace(tzid), `"`)
	if loc := extract.LoadZone(tzid); loc != nil {
		return loc
	}
	if parts := strings.Split(strings.Trim(tzid, "/"), "/"); len(parts) >= 2 {
		if loc := extract.LoadZone(strings.Join(parts[len(parts)-2:], "/")); loc != nil {
			return loc
		}
		if len(parts) >= 3 {
			if loc := extract.LoadZone(strings.Join(parts[len(parts)-3:], "/")); loc != nil {
				return loc
			}
		}
	}
	if vtz != nil {
		if loc := extract.LoadZone(propValue(vtz, "X-LIC-LOCATION")); loc != nil {
			return loc
		}
	}
	if loc := extract.LoadZone(windowsZones[tzid]); loc != nil {
		return loc
	}
	if vtz == nil {
		return nil
	}
	for _, sub := range vtz.Children {
		if sub.Name != ical.CompTimezoneStandard {
			continue
		}
		if off, ok := utcOffset(propValue(sub, ical.PropTimezoneOffsetTo)); ok {
			return offsetZone(off)
		}
	}
	return nil
}

// utcOffset reads a UTC-OFFSET value: +0100, -0500, +053000.
func utcOffset(s string) (int, bool) {
	if len(s) != 5 && len(s) != 7 || s[0] != '+' && s[0] != '-' {
		return 0, false
	}
	n := 0
	for _, r := range s[1:] {
		if r < '0' || r > '9' {
			return 0, false
		}
	}
	h := int(s[1]-'0')*10 + int(s[2]-'0')
	m := int(s[3]-'0')*10 + int(s[4]-'0')
	n = h*3600 + m*60
	if s[0] == '-' {
		n = -n
	}
	return n, true
}
