package calendar

import (
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ringsaturn/tzf"

	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/ingest/extract"
	"github.com/feedsvc/feedsvc/internal/gazetteer"
)

// zoneFinder maps coordinates to IANA zones with time-zone boundary
// polygons. Building it takes seconds and tens of MB, so it is built on the
// first event that has coordinates but no zone, once.
var zoneFinder = sync.OnceValue(func() tzf.F {
	start := time.Now()
	defer func() { zoneFinderBuild.Store(int64(time.Since(start))) }()
	f, err := tzf.NewDefaultFinder()
	if err != nil {
		slog.Error("time zone finder unavailable; zones from coordinates fall back to the gazetteer", "err", err)
		return nil
	}
	return f
})

// zoneFinderBuild is how long building zoneFinder took (zero until it is
// built): the document whose reading built it is not charged for it.
var zoneFinderBuild atomic.Int64

// eventZone is the event's IANA zone, first of: the zone the data names;
// the zone at its coordinates; the zone of its city, or of its country
// when the country has one; a fixed zone for the offset its times were
// written with; UTC.
func eventZone(named string, where *domain.Location, offset *int) *time.Location {
	if loc := extract.LoadZone(named); loc != nil {
		return loc
	}
	if where != nil && where.Coordinates != nil {
		if loc := zoneAt(where.Coordinates.Lat, where.Coordinates.Lng); loc != nil {
			return loc
		}
	}
	if where != nil {
		cc := gazetteer.CountryCode(where.Country)
		if where.Locality != "" {
			if c, ok := gazetteer.Lookup(where.Locality, cc); ok {
				if loc := extract.LoadZone(c.Timezone); loc != nil {
					return loc
				}
			}
		}
		if loc := extract.LoadZone(gazetteer.CountryZone(cc)); loc != nil && cc != "" {
			return loc
		}
	}
	if offset != nil {
		if loc := offsetZone(*offset); loc != nil {
			return loc
		}
	}
	return time.UTC
}

func zoneAt(lat, lng float64) *time.Location {
	if f := zoneFinder(); f != nil {
		if loc := extract.LoadZone(f.GetTimezoneName(lng, lat)); loc != nil {
			return loc
		}
	}
	if c, _, ok := gazetteer.Nearest(lat, lng, 100); ok {
		return extract.LoadZone(c.Timezone)
	}
	return nil
}

// offsetZone is the IANA Etc zone of a whole-hour UTC offset: Etc/GMT-2
// is UTC+2 (POSIX signs are inverted).
func offsetZone(seconds int) *time.Location {
	if seconds == 0 {
		return time.UTC
	}
	if seconds%3600 != 0 || seconds < -12*3600 || seconds > 14*3600 {
		return nil
	}
	return extract.LoadZone(fmt.Sprintf("Etc/GMT%+d", -seconds/3600))
}
