package feedout

import (
	"bytes"
	"fmt"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"golang.org/x/net/html"

	"github.com/feedsvc/feedsvc/domain"
)

// CalendarType is the media type of the event output.
const CalendarType = "text/calendar; charset=utf-8"

// Calendar is an event feed as a calendar: its events in a window.
type Calendar struct {
	FeedID      uuid.UUID
	Name        string
	Description string
	// From and To are the window [From, To) the instances were chosen in;
	// each zone's VTIMEZONE covers it.
	From, To time.Time
	Events   []Happening
}

// Happening is one event of the calendar.
type Happening struct {
	// ID is the event's id, its UID: the same in every feed and fetch.
	ID      uuid.UUID
	Details domain.HappeningDetails
	// Instances are those to show (in the window), in any order.
	Instances []domain.HappeningInstance
	// Sequence grows with every change of the event, so calendar apps
	// replace their copy (RFC 5545 section 3.8.7.4).
	Sequence int
	// Updated is when the event last changed (DTSTAMP, LAST-MODIFIED).
	Updated time.Time
}

// span is an instance as one VEVENT shows it: from its first occurrence's
// start to its last occurrence's end.
type span struct {
	start  time.Time
	end    *time.Time
	allDay bool
	status string
}

func spanOf(in domain.HappeningInstance) (span, bool) {
	if len(in.Occurrences) == 0 {
		return span{}, false
	}
	s := span{start: in.Occurrences[0].Start, allDay: in.Occurrences[0].AllDay, status: in.Status}
	for _, o := range in.Occurrences {
		if o.Start.Before(s.start) {
			s.start = o.Start
		}
		if o.End != nil && (s.end == nil || o.End.After(*s.end)) {
			e := *o.End
			s.end = &e
		}
	}
	return s, true
}

func (s span) length() time.Duration {
	if s.end == nil {
		return -1
	}
	return s.end.Sub(s.start)
}

// ICalendar renders cal as an iCalendar object (RFC 5545). An event with
// one instance is one VEVENT. An event with several is one VEVENT for its
// first instance listing the others' starts as RDATEs (the service keeps
// each instance, not the source's rule, so the set is exact however the
// source wrote it), and a VEVENT with RECURRENCE-ID for each instance that
// differs from the first: another length, or a status (a cancelled one is
// STATUS:CANCELLED). Times are local to the event's zone with TZID and
// the zone's VTIMEZONE, or UTC when it has none.
func ICalendar(cal Calendar) []byte {
	w := &icalWriter{}
	w.line("BEGIN:VCALENDAR")
	w.line("VERSION:2.0")
	w.line("PRODID:-//feedsvc//event feed " + cal.FeedID.String() + "//EN")
	w.line("CALSCALE:GREGORIAN")
	w.line("METHOD:PUBLISH")
	w.prop("X-WR-CALNAME", escapeText(cal.Name))
	w.prop("X-WR-TIMEZONE", calendarZone(cal.Events))
	if cal.Description != "" {
		w.prop("X-WR-CALDESC", escapeText(cal.Description))
	}
	zones := map[string]*time.Location{}
	var body icalWriter
	for _, ev := range cal.Events {
		loc := zoneOf(ev.Details)
		if loc != time.UTC {
			zones[loc.String()] = loc
		}
		body.happening(ev, loc)
	}
	names := make([]string, 0, len(zones))
	for name := range zones {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		w.vtimezone(zones[name], cal.From, cal.To)
	}
	w.buf.Write(body.buf.Bytes())
	w.line("END:VCALENDAR")
	return w.buf.Bytes()
}

// calendarZone is the calendar's zone (X-WR-TIMEZONE, which apps take for
// the whole calendar's): the zone every event shares, whose times are
// written with its TZID and VTIMEZONE; UTC when the events' zones differ,
// when one has none, or when there are none. Times of events without a
// zone are written in UTC; saying so keeps readers that take a calendar's
// only VTIMEZONE for its zone (Outlook exports are written that way) from
// moving them into another's.
func calendarZone(events []Happening) string {
	shared := ""
	for i, ev := range events {
		name := zoneOf(ev.Details).String()
		if i > 0 && name != shared {
			return "UTC"
		}
		shared = name
	}
	if shared == "" {
		return "UTC"
	}
	return shared
}

// zoneOf is the event's zone; UTC when it names none Go knows.
func zoneOf(d domain.HappeningDetails) *time.Location {
	if d.Time.Timezone == "" || d.Time.Timezone == "UTC" {
		return time.UTC
	}
	loc, err := time.LoadLocation(d.Time.Timezone)
	if err != nil {
		return time.UTC
	}
	return loc
}

func (w *icalWriter) happening(ev Happening, loc *time.Location) {
	spans := make([]span, 0, len(ev.Instances))
	for _, in := range ev.Instances {
		if s, ok := spanOf(in); ok {
			spans = append(spans, s)
		}
	}
	if len(spans) == 0 {
		return
	}
	slices.SortFunc(spans, func(a, b span) int { return a.start.Compare(b.start) })
	first := spans[0]
	if len(spans) == 1 {
		// A one-off carries its status itself.
		w.vevent(ev, loc, first, nil, nil)
		return
	}
	// The series itself is confirmed; a cancelled first instance is an
	// override like any other, or it would cancel the whole series.
	master := first
	master.status = domain.StatusScheduled
	w.vevent(ev, loc, master, func() {
		for _, s := range spans[1:] {
			w.prop("RDATE"+timeParams(s.allDay, loc), timeValue(s.start, s.allDay, loc))
		}
	}, nil)
	for _, s := range spans {
		if s.status != domain.StatusScheduled || s.length() != first.length() || s.allDay != first.allDay {
			w.vevent(ev, loc, s, nil, &s.start)
		}
	}
}

// vevent writes one VEVENT of ev showing s; extra adds lines (RDATEs),
// recurrence makes it the override of that recurrence.
func (w *icalWriter) vevent(ev Happening, loc *time.Location, s span, extra func(), recurrence *time.Time) {
	d := ev.Details
	w.line("BEGIN:VEVENT")
	w.prop("UID", ev.ID.String())
	stamp := ev.Updated.UTC().Format("20060102T150405Z")
	w.prop("DTSTAMP", stamp)
	w.prop("LAST-MODIFIED", stamp)
	w.prop("SEQUENCE", strconv.Itoa(max(ev.Sequence, 0)))
	if recurrence != nil {
		w.prop("RECURRENCE-ID"+timeParams(s.allDay, loc), timeValue(*recurrence, s.allDay, loc))
	}
	w.prop("DTSTART"+timeParams(s.allDay, loc), timeValue(s.start, s.allDay, loc))
	if s.end != nil && s.end.After(s.start) {
		w.prop("DTEND"+timeParams(s.allDay, loc), timeValue(*s.end, s.allDay, loc))
	}
	if extra != nil {
		extra()
	}
	w.prop("SUMMARY", escapeText(plainText(d.Title)))
	organizer, organizerURI := organizerOf(d.Organizer)
	desc := plainText(firstOf(d.Description, d.ShortDescription))
	if organizer != "" && organizerURI == "" {
		// ORGANIZER's value is a CAL-ADDRESS, a URI (RFC 5545 sections
		// 3.8.4.3 and 3.3.3), and CN only names that address: an
		// organizer known by name alone has no ORGANIZER (an invented
		// address would be one apps offer to mail), and its name goes
		// where every app shows it, the description.
		desc = strings.TrimSpace(desc + "\n\nOrganizer: " + organizer)
	}
	if desc != "" {
		w.prop("DESCRIPTION", escapeText(desc))
	}
	if where := locationText(d.Location); where != "" {
		w.prop("LOCATION", escapeText(where))
	}
	if d.Location != nil && d.Location.Coordinates != nil {
		c := d.Location.Coordinates
		w.prop("GEO", strconv.FormatFloat(c.Lat, 'f', -1, 64)+";"+strconv.FormatFloat(c.Lng, 'f', -1, 64))
	}
	if u := firstOf(d.PrimaryURL, d.Source.URL, d.Source.PermalinkURL); u != "" {
		w.prop("URL;VALUE=URI", u)
	}
	if organizerURI != "" {
		params := ""
		if organizer != "" {
			params = ";CN=" + paramValue(organizer)
		}
		w.prop("ORGANIZER"+params, organizerURI)
	}
	w.prop("STATUS", icalStatus(s.status))
	w.line("END:VEVENT")
}

// icalStatus maps an instance's status: cancelled is CANCELLED, postponed
// (no new date yet) TENTATIVE, the rest CONFIRMED.
func icalStatus(status string) string {
	switch status {
	case domain.StatusCancelled:
		return "CANCELLED"
	case domain.StatusPostponed:
		return "TENTATIVE"
	}
	return "CONFIRMED"
}

// organizerOf is the organizer's name and address: mailto: for a contact
// that is an email address, else the organizer's own URL (a CAL-ADDRESS
// is any URI, RFC 5545 section 3.3.3, and a web page is where the
// organizer answers); "" when there is neither.
func organizerOf(o *domain.Organizer) (name, uri string) {
	if o == nil {
		return "", ""
	}
	name = strings.TrimSpace(o.Name)
	switch {
	case strings.Contains(o.Contact, "@") && !strings.ContainsAny(o.Contact, " :<>\""):
		uri = "mailto:" + o.Contact
	case strings.HasPrefix(o.Contact, "mailto:") && strings.Contains(o.Contact, "@") && !strings.ContainsAny(o.Contact, " <>\""):
		uri = o.Contact
	case absoluteURI(o.URL):
		uri = o.URL
	}
	return name, uri
}

// absoluteURI: an http(s) URL with a host and nothing a content line
// cannot carry.
func absoluteURI(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" &&
		!strings.ContainsAny(s, " \r\n\t")
}

// locationText is the venue and address, or the online address.
func locationText(l *domain.Location) string {
	if l == nil {
		return ""
	}
	var parts []string
	if l.Venue != nil && l.Venue.Name != "" {
		parts = append(parts, l.Venue.Name)
	}
	if addr := strings.TrimSpace(l.DisplayAddress); addr != "" {
		// A display address often starts with the venue's name already
		// ("Blue Note, Hauptstrasse 1"): then it is the whole text.
		if len(parts) > 0 && startsWithName(addr, parts[0]) {
			parts = parts[:0]
		}
		parts = append(parts, addr)
	}
	if len(parts) == 0 && l.Online != nil {
		parts = append(parts, l.Online.URL)
	}
	return strings.Join(parts, ", ")
}

// startsWithName: text is name, or starts with it followed by a
// separator (so "Blue Note Café" does not swallow the venue "Blue").
// Case and surrounding space aside.
func startsWithName(text, name string) bool {
	name = strings.TrimSpace(name)
	if name == "" || len(text) < len(name) || !strings.EqualFold(text[:len(name)], name) {
		return false
	}
	rest := strings.TrimLeft(text[len(name):], " ")
	if rest == "" {
		return true
	}
	for _, sep := range []string{",", ";", "–", "-", "|", "/", "("} {
		if strings.HasPrefix(rest, sep) {
			return true
		}
	}
	return false
}

// timeParams are the parameters of a time in loc: a DATE for all-day
// spans, a TZID for a zone other than UTC.
func timeParams(allDay bool, loc *time.Location) string {
	switch {
	case allDay:
		return ";VALUE=DATE"
	case loc == time.UTC:
		return ""
	}
	return ";TZID=" + paramValue(loc.String())
}

func timeValue(t time.Time, allDay bool, loc *time.Location) string {
	switch {
	case allDay:
		return t.In(loc).Format("20060102")
	case loc == time.UTC:
		return t.UTC().Format("20060102T150405Z")
	}
	return t.In(loc).Format("20060102T150405")
}

// vtimezone writes loc's VTIMEZONE over [from, to): the period in effect
// at from, then each transition, with the offsets Go's zone data gives.
// Listing the transitions themselves (rather than rules) is exact for the
// window and lets no reader guess.
func (w *icalWriter) vtimezone(loc *time.Location, from, to time.Time) {
	w.line("BEGIN:VTIMEZONE")
	w.prop("TZID", loc.String())
	t := from.In(loc)
	name, offset := t.Zone()
	w.observance(t.IsDST(), t.UTC().Add(time.Duration(offset)*time.Second), offset, offset, name)
	for i := 0; i < 64; i++ {
		_, end := t.ZoneBounds()
		if end.IsZero() || !end.Before(to) {
			break
		}
		next := end.In(loc)
		nextName, nextOffset := next.Zone()
		w.observance(next.IsDST(), end.UTC().Add(time.Duration(offset)*time.Second), offset, nextOffset, nextName)
		t, offset = next, nextOffset
	}
	w.line("END:VTIMEZONE")
}

// observance writes one STANDARD or DAYLIGHT block; onset is the local
// time of its start in the offset before it (as UTC fields).
func (w *icalWriter) observance(dst bool, onset time.Time, from, to int, name string) {
	kind := "STANDARD"
	if dst {
		kind = "DAYLIGHT"
	}
	w.line("BEGIN:" + kind)
	w.prop("DTSTART", onset.Format("20060102T150405"))
	w.prop("TZOFFSETFROM", utcOffset(from))
	w.prop("TZOFFSETTO", utcOffset(to))
	if name != "" {
		w.prop("TZNAME", escapeText(name))
	}
	w.line("END:" + kind)
}

func utcOffset(seconds int) string {
	sign := "+"
	if seconds < 0 {
		sign, seconds = "-", -seconds
	}
	out := fmt.Sprintf("%s%02d%02d", sign, seconds/3600, seconds/60%60)
	if s := seconds % 60; s != 0 {
		out += fmt.Sprintf("%02d", s)
	}
	return out
}

// icalWriter writes content lines, folded at 75 octets (RFC 5545 section
// 3.1) without splitting a character, ended with CRLF.
type icalWriter struct {
	buf bytes.Buffer
}

func (w *icalWriter) prop(name, value string) { w.line(name + ":" + value) }

func (w *icalWriter) line(l string) {
	width := 75
	for len(l) > width {
		cut := width
		for cut > 0 && !utf8.RuneStart(l[cut]) {
			cut--
		}
		w.buf.WriteString(l[:cut])
		w.buf.WriteString("\r\n ")
		l = l[cut:]
		width = 74 // the continuation's leading space counts
	}
	w.buf.WriteString(l)
	w.buf.WriteString("\r\n")
}

// escapeText escapes a TEXT value (RFC 5545 section 3.3.11).
func escapeText(s string) string {
	return textEscaper.Replace(strings.ReplaceAll(s, "\r\n", "\n"))
}

var textEscaper = strings.NewReplacer(`\`, `\\`, ";", `\;`, ",", `\,`, "\n", `\n`, "\r", `\n`)

// paramValue is a parameter value: quoted when it holds a separator, with
// the characters a parameter cannot hold dropped.
func paramValue(s string) string {
	s = strings.Map(func(r rune) rune {
		if r == '"' || r < ' ' || r == 0x7f {
			return -1
		}
		return r
	}, s)
	if strings.ContainsAny(s, ";:,") {
		return `"` + s + `"`
	}
	return s
}

// plainText is sanitised HTML as text: tags dropped, entities decoded,
// paragraphs and line breaks kept as newlines.
func plainText(s string) string {
	if !strings.ContainsAny(s, "<&") {
		return strings.TrimSpace(s)
	}
	var b strings.Builder
	z := html.NewTokenizer(strings.NewReader(s))
	for {
		switch z.Next() {
		case html.ErrorToken:
			return strings.TrimSpace(b.String())
		case html.TextToken:
			b.Write(z.Text())
		case html.StartTagToken, html.EndTagToken, html.SelfClosingTagToken:
			name, _ := z.TagName()
			switch string(name) {
			case "br", "p", "div", "li", "h1", "h2", "h3", "h4", "h5", "h6", "tr":
				if b.Len() > 0 && !strings.HasSuffix(b.String(), "\n") {
					b.WriteByte('\n')
				}
			}
		}
	}
}
