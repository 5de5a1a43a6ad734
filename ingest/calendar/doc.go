// Package calendar extracts happenings (domain.HappeningDetails) from
// documents. In this package "event" is the formats' word (a schema.org
// Event, an iCalendar VEVENT); what it returns are happenings
// (Result.Happenings). What it reads (api.md 2.9): schema.org
// Event and every subtype in an HTML page's JSON-LD, or in its Microdata
// when no JSON-LD block holds an event, the VEVENTs of iCalendar files,
// and platform posts (a Facebook page event, or a post whose text names a
// date and a time). Each format reads its own syntax into a draft
// (html.go, schemaorg.go, schedule.go, microdata.go, ical.go, post.go);
// identity, expansion,
// display, sanitising and geography are shared (identity.go,
// occurrences.go, display.go, sanitize.go, geo.go, timezone.go). Extract
// detects the format and hands off.
//
// # Identity
//
// The same event found twice (two pages, a page and its .ics, a re-crawl)
// has one identity, the first of:
//
//  1. "url:" + the event's own URL (JSON-LD url, iCalendar URL),
//     normalised (lower-case scheme and host, no default port, fragment,
//     tracking parameters or trailing slash);
//  2. "uid:" + the iCalendar UID;
//  3. "url:" + the page's URL, when the page holds this one event only
//     (the page is the event's page: its .ics, which names the page in
//     URL, then matches);
//  4. "page:" + the page's URL + "#" + the folded name.
//
// When events of one document with different names share an identity (a
// listing whose events all point at the listing), each gets "#" + its
// folded name appended. Events of one document with the same identity and
// name are one event listed once per date: their dates become its
// instances.
//
// # Occurrences
//
// A one-off event is one instance (key "single", so its id survives a new
// date) with one occurrence, or one per local day when it spans several
// (cut at local midnights; a timed event ending before 06:00 on the next
// day is one night, not two days). All-day occurrences run from local
// midnight to the next local midnight of the event's zone, so they keep
// their dates. A recurring event (RRULE/RDATE/EXDATE, or a schema.org
// eventSchedule, expanded by rrule-go in the event's zone, so 19:00
// Europe/Berlin stays 19:00 across a clock change) has one instance per
// recurrence, keyed by its original start in RFC 3339 UTC; a RECURRENCE-ID
// override keeps that key, and when it moves the recurrence it is
// rescheduled with the original start as previousStart. Recurrences are
// expanded from the first day of the month a week before Options.Now
// (UTC), so every crawl within a month yields the same instances, to
// Options.Now + Horizon (Horizon in HappeningDetails); at most 1000
// instances and 2000 occurrences, and the horizon then ends at the last
// one kept. A series with no recurrence in that window keeps its latest
// earlier one, or its first later one. A span longer than 400 days keeps
// its first and last day and the days within the window.
//
// The recurrences of an all-day series are days, compared by date: an
// override naming one by a date-time (RECURRENCE-ID;TZID=…:20240612T000000,
// as Exchange writes it) names the day it writes, whatever its zone; and
// the series' UNTIL day is included, that is its day in the event's zone
// or, when later, the day it writes (UNTIL=20241028T000000Z is still 27
// October in Chicago). An eventSchedule's byDay takes DayOfWeek names and
// iCalendar days, with an ordinal too ("2MO", the second Monday); a
// schedule that states no start, and whose event states none, runs from
// the window's start, and its displayText names no start.
//
// # Time block
//
// temporalPattern: "recurring" for a rule or several dates; "ongoing" for
// a one-off span over more than 14 local days (an exhibition, a season);
// "singular" otherwise. timezone: the zone the data names (iCalendar:
// DTSTART's TZID, resolved through its VTIMEZONE, and a Windows name
// through the CLDR's windowsZones table; else the calendar's
// X-WR-TIMEZONE; else the zone of its VTIMEZONEs when they all name one,
// as Exchange writes a calendar; schema.org scheduleTimezone), else the zone at the event's coordinates
// (ringsaturn/tzf, built on first use: it takes seconds and tens of MB),
// else the zone of its city or its country (gazetteer), else the fixed
// Etc/GMT zone of the offset its start was written with, else UTC.
// displayText, in English, local time, 24-hour clock:
//
//	Tue 15 Oct 2024, 19:00–22:00 (Europe/Berlin)          timed, one day
//	Fri 7 Jun 2024, 18:00 – Sun 9 Jun 2024, 23:00 (Europe/Berlin)
//	Sat 8 Jun 2024                                        all day
//	Fri 7 Jun 2024 – Sun 9 Jun 2024                       all day, several
//	Every week on Tuesday, 19:00–21:00 (Europe/Berlin), from Tue 1 Oct 2024, until Tue 17 Dec 2024
//	Every month on 2nd Saturday, 14:00–17:00 (Europe/Berlin)   no start given
//	3 dates, Tue 14 May 2024 – Sat 1 Jun 2024             listed dates
//	Every day, 09:00–09:30 (Europe/Berlin), from Mon 4 Nov 2024, 3 times
//	                                                      COUNT=5 less two EXDATEs: what occurs
//
// # Geography
//
// geoLocations holds one LOCATION for a concrete place, scored 100 with
// coordinates, 90 with a street address, 70 with only a venue name; and a
// RELEVANCE_REGION for each of its locality (80), region (50) and country
// (30), named by the address. A place known by coordinates but not its
// locality, region or country gets them from the gazetteer (GeoNames
// cities of 15,000 or more with their first-level divisions): the nearest
// city within 50 km, its locality scored from 80 at its centre down to 40
// at 50 km. A region is taken from the gazetteer only when the address
// names no other country.
// A place with no coordinates of its own whose locality the gazetteer
// knows gets that city's centre as Location.ApproximateCoordinates, which
// geographic relevance ranks it by and the API never shows as its
// coordinates: its geoLocations say how near it is known (its LOCATION
// scores 90 or 70, not 100, and the locality is a RELEVANCE_REGION).
//
// # Text
//
// Titles and descriptions are sanitised HTML (bluemonday): a title keeps
// no markup, a description what user-generated content may hold. Plain
// text (iCalendar, Microdata) is escaped first. A description longer than
// 200 characters also gets a plain-text shortDescription.
package calendar
