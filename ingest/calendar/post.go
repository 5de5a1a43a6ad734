package calendar

import (
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	dps "github.com/markusmobius/go-dateparser"

	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/ingest/document"
	"github.com/feedsvc/feedsvc/ingest/platform"
)

// A platform post (platform.MediaType) is read in one of two ways. A
// Facebook page event is an event already: its times, zone, place,
// coordinates, cover and tickets are taken as the platform states them.
// Any other post is an event only when its text names a date and a time
// of day that go-dateparser finds (in any language it knows, relative
// words like "tomorrow" taken from when the post was published); a post
// without both is no event, nor one whose text has no digit (a time of
// day is written with digits: "noon" alone is not read). A day the parser reads as the post's own
// ("today", "tonight") cannot be told from a bare time, so it counts as
// none. A post states no zone, so its times are read as UTC. Either way
// the event's source block is the post's own.

// postTitleRunes bounds the title taken from a post's first line.
const postTitleRunes = 120

// maxAhead bounds how far after its post a date found in the text may
// lie: further is more likely a year or a number read as a date.
const maxAhead = 400 * 24 * time.Hour

func fromPost(d document.Document) ([]draft, int, error) {
	p, err := platform.ReadPost(d)
	if err != nil {
		return nil, 0, err
	}
	block := p.Block()
	if p.Event != nil {
		return []draft{pageEvent(p, &block)}, 0, nil
	}
	start, ok := dateAndTime(p.Text, p.PublishedAt)
	if !ok {
		return nil, 0, nil
	}
	dr := draft{
		url:         p.URL,
		title:       textToHTML(firstLine(p.Text)),
		description: textToHTML(p.Text),
		loc:         time.UTC,
		when:        schedule{first: span{start: start}},
		published:   timePtr(p.PublishedAt),
		organizer:   organizer(p.Account, p.Platform),
		source:      &block,
	}
	if p.ImageURL != "" {
		dr.images = []string{p.ImageURL}
	}
	return []draft{dr}, 0, nil
}

// pageEvent is a Facebook page event as a draft.
func pageEvent(p platform.Post, block *domain.SourceBlock) draft {
	ev := p.Event
	var where *domain.Location
	if pl := ev.Place; pl != nil {
		var coords *domain.Coordinates
		if pl.Lat != nil && pl.Lng != nil {
			coords = &domain.Coordinates{Lat: *pl.Lat, Lng: *pl.Lng}
		}
		a := address{venue: pl.Name, street: pl.Street, postalCode: pl.PostalCode, locality: pl.City, region: pl.Region, country: pl.Country}
		where = a.location(coords, nil)
	}
	if ev.Online {
		where = withOnline(where, p.URL)
	}
	loc := eventZone(ev.Timezone, where, nil)
	first := span{start: ev.Start.In(loc)}
	if ev.End.After(ev.Start) {
		first.end = ev.End.In(loc)
	}
	when := schedule{first: first, status: domain.StatusScheduled}
	if ev.Cancelled {
		when.status = domain.StatusCancelled
	}
	dr := draft{
		url:         p.URL,
		title:       textToHTML(p.Title),
		description: textToHTML(p.Text),
		loc:         loc,
		when:        when,
		location:    where,
		modified:    timePtr(ev.UpdatedAt),
		organizer:   organizer(p.Account, p.Platform),
		source:      block,
	}
	if p.ImageURL != "" {
		dr.images = []string{p.ImageURL}
	}
	if ev.TicketURL != "" {
		dr.urls = []string{ev.TicketURL}
	}
	return dr
}

// organizer is the account that posted, as the event's organizer.
func organizer(a platform.Account, t domain.SourceType) *domain.Organizer {
	name := strings.TrimSpace(a.Name)
	if name == "" {
		name = a.Username
	}
	if name == "" {
		return nil
	}
	o := &domain.Organizer{Name: name}
	if a.Username != "" {
		o.URL = domain.ProfileURL(t, a.Username)
	}
	return o
}

// dateAndTime is the first moment the text names with both a date and a
// time of day, read relative to when the post was published: one phrase
// ("Sat 5 Dec 19:30", "tomorrow at 8 pm"), or a date followed by a time
// ("Saturday, 5 December, doors 19:30"). A date alone, a time alone, or a
// moment before the post or over a year after it is none.
func dateAndTime(text string, published time.Time) (time.Time, bool) {
	// A time of day is written with digits in every language and script
	// the parser reads ("19:30", "8pm", "20h", "19 Uhr"); a text without
	// any spares the parser, whose language detection is most of the cost
	// of a post (bench/docs/platform-post-events.md).
	if !strings.ContainsFunc(text, unicode.IsDigit) {
		return time.Time{}, false
	}
	if published.IsZero() {
		published = time.Now()
	}
	lang, found, ok := search(text, published, dps.Future, "")
	if !ok || len(found) == 0 {
		return time.Time{}, false
	}
	// The text read from two days, with nothing moved to the future, tells
	// a date from a bare time: "19:30" (or "at 8pm") lands on whatever day
	// it is read from, a date does not.
	later := published.Add(timeOnlyShift)
	onPublished, onLater := dates(text, published, lang), dates(text, later, lang)
	timeOnly := func(phrase string) bool {
		a, okA := onPublished[phrase]
		b, okB := onLater[phrase]
		return okA && okB && sameDay(a, published) && sameDay(b, later)
	}
	var day time.Time
	for _, r := range found {
		dated, timed := !timeOnly(r.Text), r.Date.Period.IsTime()
		var at time.Time
		switch {
		case dated && timed:
			at = r.Date.Time
		case dated:
			day = r.Date.Time
		case timed && !day.IsZero():
			t := r.Date.Time.UTC()
			y, m, d := day.UTC().Date()
			at = time.Date(y, m, d, t.Hour(), t.Minute(), t.Second(), 0, time.UTC)
		}
		if plausible(at, published) {
			return at.UTC(), true
		}
	}
	return time.Time{}, false
}

// timeOnlyShift is how far apart the two readings of a text are.
const timeOnlyShift = 3 * 24 * time.Hour

// dateParser is one parser for every post: it caches what it learned of
// the languages, which only pays while the set of languages it is asked
// to detect among stays the same (always all of them here).
var dateParser = &dps.Parser{}

// search finds the dates of a text as read on the day at, an incomplete
// date taken as the source says, and the language it read the text in.
// Detecting the language is most of a search's cost, so a text already
// read once is read again in its language only.
func search(text string, at time.Time, source dps.PreferredDateSource, lang string) (string, []dps.SearchResult, bool) {
	cfg := &dps.Configuration{
		CurrentTime: at.UTC(), DefaultTimezone: time.UTC,
		PreferredDateSource: source, ReturnTimeAsPeriod: true,
	}
	if lang != "" {
		found, err := dateParser.SearchWithLanguage(cfg, lang, text)
		return lang, found, err == nil
	}
	lang, found, err := dateParser.Search(cfg, text)
	return lang, found, err == nil
}

// dates are the dates of a text's phrases as read on the day at in lang,
// nothing moved to the future.
func dates(text string, at time.Time, lang string) map[string]time.Time {
	_, found, _ := search(text, at, dps.CurrentPeriod, lang)
	out := make(map[string]time.Time, len(found))
	for _, r := range found {
		out[r.Text] = r.Date.Time
	}
	return out
}

func sameDay(a, b time.Time) bool {
	ya, ma, da := a.UTC().Date()
	yb, mb, db := b.UTC().Date()
	return ya == yb && ma == mb && da == db
}

// plausible: a moment the post may announce, from the day before it to
// maxAhead after it.
func plausible(t, published time.Time) bool {
	return !t.IsZero() && !t.Before(published.Add(-24*time.Hour)) && !t.After(published.Add(maxAhead))
}

// firstLine is a post's first non-empty line, cut at a word within
// postTitleRunes.
func firstLine(text string) string {
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		if utf8.RuneCountInString(line) <= postTitleRunes {
			return line
		}
		cut := string([]rune(line)[:postTitleRunes])
		if i := strings.LastIndexByte(cut, ' '); i > len(cut)/2 {
			cut = cut[:i]
		}
		return strings.TrimRight(cut, " ,;:.-") + "…"
	}
	return ""
}

func timePtr(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}
