package extract

import (
	"time"
)

// dateSource reads one place a page may state its publication date.
type dateSource func(p *page) string

func metaDate(key string) dateSource { return func(p *page) string { return p.meta[key] } }

func timeDate(selector string) dateSource {
	return func(p *page) string { return p.doc.Find(selector).First().AttrOr("datetime", "") }
}

// publishedSources are where the publication date is read, most explicit
// first: schema.org's datePublished (JSON-LD, then a Microdata <meta>),
// OpenGraph's article:published_time, a visible <time> marked
// datePublished, then dateCreated, CMS and analytics conventions, Dublin
// Core, and other <time> elements. What is written for machines comes
// before what a page shows: a <time> marked datePublished is often the
// date the template displays (an update), and disagrees with the
// metadata.
var publishedSources = []dateSource{
	func(p *page) string { return p.ld.Published },
	metaDate("datepublished"),
	metaDate("article:published_time"), metaDate("og:published_time"), metaDate("og:article:published_time"),
	timeDate("time[itemprop=datePublished][datetime]"),
	func(p *page) string { return p.ld.Created },
	metaDate("article.published"), metaDate("parsely-pub-date"), metaDate("sailthru.date"), metaDate("pubdate"),
	metaDate("publishdate"), metaDate("publish-date"), metaDate("publish_date"), metaDate("date"),
	metaDate("dc.date.issued"), metaDate("dcterms.issued"), metaDate("dc.date"), metaDate("dcterms.date"),
	metaDate("dcterms.created"), metaDate("dc.date.created"), metaDate("cxenseparse:recs:publishtime"),
	metaDate("article_date_original"), metaDate("original-publish-date"),
	timeDate("time[pubdate][datetime]"), timeDate("time[datetime]"),
}

// siteZoneKeys are the meta names a page declares its site's time zone
// with.
var siteZoneKeys = []string{"timezone", "time-zone"}

// published is the first date publishedSources give. A date with a zone or
// offset is that instant. One without is read in the zone the page
// declares for its site, else UTC; but when a later source gives the same
// day (and the same time, if it has one) with a zone, that one is taken:
// it says the same, more exactly.
func (p *page) published() time.Time {
	var first time.Time
	firstKind := NoDate
	for _, src := range publishedSources {
		s := src(p)
		if s == "" {
			continue
		}
		t, kind := ParseDateIn(s, time.UTC)
		switch {
		case kind == NoDate:
			continue
		case kind == ZonedDateTime && (firstKind == NoDate || sameWallClock(first, firstKind, t)):
			return plausible(t)
		case kind != ZonedDateTime && firstKind == NoDate:
			first, firstKind = t, kind
		}
	}
	if firstKind == NoDate {
		return time.Time{}
	}
	return plausible(time.Date(first.Year(), first.Month(), first.Day(), first.Hour(), first.Minute(),
		first.Second(), first.Nanosecond(), p.siteZone()))
}

// sameWallClock reports whether a zoned date t says what a zone-less one
// (read as UTC) says: the same day, and for a date-time the same minute.
func sameWallClock(local time.Time, kind DateKind, t time.Time) bool {
	y, m, d := local.Date()
	ty, tm, td := t.Date()
	if y != ty || m != tm || d != td {
		return false
	}
	return kind == DateOnly || local.Hour() == t.Hour() && local.Minute() == t.Minute()
}

// siteZone is the time zone the page declares for its site, else UTC.
func (p *page) siteZone() *time.Location {
	for _, k := range siteZoneKeys {
		if loc := parseZone(p.meta[k]); loc != nil {
			return loc
		}
	}
	return time.UTC
}
