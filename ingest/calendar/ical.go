package calendar

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"html"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/emersion/go-ical"
	"github.com/teambition/rrule-go"

	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/ingest/document"
	"github.com/feedsvc/feedsvc/ingest/extract"
)

// ErrBadCalendar is returned for a document that claims to be iCalendar
// but cannot be read as one.
var ErrBadCalendar = errors.New("malformed iCalendar")

// calendar is one iCalendar file being read.
type calendar struct {
	// zones are the calendar's TZIDs, resolved to IANA zones.
	zones map[string]*time.Location
	// zone is the calendar's own zone (X-WR-TIMEZONE, else its only
	// VTIMEZONE), nil when unnamed.
	zone *time.Location
	// work is the document's budget.
	work *work
}

// fromICalendar reads the VEVENTs of an iCalendar file: a master event per
// UID with its RRULE, RDATE and EXDATE, and the RECURRENCE-ID overrides of
// single recurrences. An event without a readable start is dropped. Only
// the first MaxCalendarBytes are read, at most 4 VEVENTs for each of the
// MaxEvents events kept, and only MaxEvents events drafted.
func fromICalendar(d document.Document, work *work) (out []draft, dropped int, err error) {
	body := bytes.TrimPrefix(extract.ToUTF8(d.Body, d.ContentType), []byte("\ufeff"))
	if cut, bound := cutCalendar(body, work.limits.MaxCalendarBytes, veventsPerEvent*work.limits.MaxHappenings); bound != "" {
		body = cut
		limit := int64(work.limits.MaxCalendarBytes)
		if bound == BoundHappenings {
			limit = int64(work.limits.MaxHappenings)
		}
		work.cutAt(bound, limit)
	}
	cal, err := ical.NewDecoder(bytes.NewReader(body)).Decode()
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, 0, fmt.Errorf("%w: %w", ErrBadCalendar, err)
	}
	if cal == nil {
		return nil, 0, fmt.Errorf("%w: no VCALENDAR", ErrBadCalendar)
	}
	c := calendar{zones: map[string]*time.Location{}, work: work}
	for _, comp := range cal.Children {
		if comp.Name == ical.CompTimezone {
			id := propValue(comp, ical.PropTimezoneID)
			c.zones[id] = resolveTZID(id, comp)
		}
	}
	c.zone = c.resolve(propValue(cal.Component, "X-WR-TIMEZONE"))
	if c.zone == nil {
		c.zone = c.onlyZone()
	}
	masters, overrides, order := groupByUID(cal.Children)
	if max := work.limits.MaxHappenings; len(order) > max {
		order = order[:max]
		work.cutAt(BoundHappenings, int64(max))
	}
	out = make([]draft, 0, len(order))
	add := func(dr draft, ok bool) {
		if !ok {
			dropped++
			return
		}
		out = append(out, dr)
	}
	for _, uid := range order {
		if work.late() {
			break
		}
		if m := masters[uid]; m != nil {
			add(c.draft(m, overrides[uid]))
			continue
		}
		// Overrides whose series is not in the file stand alone.
		for _, o := range overrides[uid] {
			add(c.draft(o, nil))
		}
	}
	return out, dropped, nil
}

// onlyZone is the zone of the calendar's VTIMEZONEs when they all name
// one: a calendar that states no X-WR-TIMEZONE (Exchange, Outlook) is
// written in the zone it defines, and its all-day dates are that zone's
// days. nil when it defines none or several.
func (c calendar) onlyZone() *time.Location {
	var only *time.Location
	for _, loc := range c.zones {
		switch {
		case loc == nil:
		case only == nil:
			only = loc
		case loc.String() != only.String():
			return nil
		}
	}
	return only
}

func groupByUID(children []*ical.Component) (masters map[string]*ical.Component, overrides map[string][]*ical.Component, order []string) {
	masters, overrides = map[string]*ical.Component{}, map[string][]*ical.Component{}
	for i, comp := range children {
		if comp.Name != ical.CompEvent {
			continue
		}
		uid := propValue(comp, ical.PropUID)
		if uid == "" {
			uid = "#" + strconv.Itoa(i)
		}
		if _, seen := masters[uid]; !seen && len(overrides[uid]) == 0 {
			order = append(order, uid)
		}
		if comp.Props.Get(ical.PropRecurrenceID) != nil {
			overrides[uid] = append(overrides[uid], comp)
		} else if masters[uid] == nil {
			masters[uid] = comp
		}
	}
	return masters, overrides, order
}

// draft reads one master VEVENT (or a lone override) with its overrides.
func (c calendar) draft(ev *ical.Component, overrides []*ical.Component) (draft, bool) {
	where := c.location(ev)
	start := ev.Props.Get(ical.PropDateTimeStart)
	if start == nil {
		return draft{}, false
	}
	loc := c.eventZone(start, where)
	first, ok := c.span(ev, loc)
	if !ok {
		return draft{}, false
	}
	when := schedule{first: first, status: icalStatus(ev, domain.StatusScheduled), days: spanDays(first, loc)}
	if rid := ev.Props.Get(ical.PropRecurrenceID); rid != nil && overrides == nil {
		if orig, _, err := c.time(rid, loc); err == nil && !orig.Equal(first.start) {
			when.previous = &orig
			if when.status == domain.StatusScheduled {
				when.status = domain.StatusRescheduled
			}
		}
	} else {
		when.set = c.recurrence(ev, first, loc)
		when.overrides = c.overrides(overrides, when, loc)
	}
	dr := draft{
		url:         extract.Resolve(nil, propValue(ev, ical.PropURL)),
		uid:         propValue(ev, ical.PropUID),
		title:       html.EscapeString(icalText(ev, ical.PropSummary)),
		description: c.description(ev),
		loc:         loc,
		when:        when,
		location:    where,
		organizer:   icalOrganizer(ev),
		images:      icalImages(ev),
		published:   c.stamp(ev, ical.PropCreated),
		modified:    c.stamp(ev, ical.PropLastModified),
	}
	return dr, true
}

// eventZone: the TZID of DTSTART, else the calendar's zone, else the
// zone of the event's place (eventZone), else UTC.
func (c calendar) eventZone(start *ical.Prop, where *domain.Location) *time.Location {
	if loc := c.resolve(start.Params.Get(ical.ParamTimezoneID)); loc != nil {
		return loc
	}
	if c.zone != nil {
		return c.zone
	}
	return eventZone("", where, nil)
}

// span reads DTSTART and DTEND (or DURATION). An all-day event without an
// end lasts its day; DTEND of a date is exclusive, as it is in span.
func (c calendar) span(ev *ical.Component, loc *time.Location) (span, bool) {
	start, allDay, err := c.time(ev.Props.Get(ical.PropDateTimeStart), loc)
	if err != nil {
		return span{}, false
	}
	sp := span{start: start, allDay: allDay}
	if p := ev.Props.Get(ical.PropDateTimeEnd); p != nil {
		if end, _, err := c.time(p, loc); err == nil && end.After(start) {
			sp.end = end
		}
	} else if p := ev.Props.Get(ical.PropDuration); p != nil {
		if d, err := p.Duration(); err == nil && d > 0 {
			sp.end = start.Add(d)
			if allDay {
				y, m, day := start.Date()
				sp.end = time.Date(y, m, day+int(d/(24*time.Hour)), 0, 0, 0, 0, loc)
			}
		}
	}
	if allDay && !sp.end.After(sp.start) {
		sp.end = nextMidnight(start)
	}
	return sp, true
}

// time reads a DATE or DATE-TIME: UTC, in its TZID, or floating (in the
// event's zone). A date is midnight in the event's zone.
func (c calendar) time(p *ical.Prop, loc *time.Location) (time.Time, bool, error) {
	if p == nil {
		return time.Time{}, false, errors.New("no value")
	}
	q := *p
	q.Params = ical.Params{}
	if v := p.Params.Get(ical.ParamValue); v != "" {
		q.Params.Set(ical.ParamValue, v)
	}
	if zone := c.resolve(p.Params.Get(ical.ParamTimezoneID)); zone != nil {
		loc = zone
	}
	q.Value = strings.TrimSpace(q.Value)
	allDay := q.ValueType() == ical.ValueDate || len(q.Value) == len("20060102")
	if allDay {
		q.Params.Set(ical.ParamValue, string(ical.ValueDate))
	}
	t, err := q.DateTime(loc)
	return t, allDay, err
}

// times reads a list-valued RDATE or EXDATE (values separated by commas;
// a PERIOD counts by its start).
func (c calendar) times(p ical.Prop, loc *time.Location) []time.Time {
	var out []time.Time
	for _, v := range strings.Split(p.Value, ",") {
		q := p
		q.Value, _, _ = strings.Cut(v, "/")
		if q.Params.Get(ical.ParamValue) == "PERIOD" {
			q.Params = ical.Params{ical.ParamTimezoneID: p.Params[ical.ParamTimezoneID]}
		}
		if t, _, err := c.time(&q, loc); err == nil {
			out = append(out, t)
		}
	}
	return out
}

// recurrence is the event's RRULE with its RDATEs and EXDATEs, through
// rrule-go; nil when it has neither RRULE nor RDATE. DTSTART is always the
// first recurrence (RFC 5545), even when the rule would not yield it. An
// unreadable rule leaves the event a one-off.
func (c calendar) recurrence(ev *ical.Component, first span, loc *time.Location) *rrule.Set {
	rule := ev.Props.Get(ical.PropRecurrenceRule)
	rdates := ev.Props.Values(ical.PropRecurrenceDates)
	if rule == nil && len(rdates) == 0 {
		return nil
	}
	set := &rrule.Set{}
	if rule != nil {
		opt, err := rrule.StrToROptionInLocation(rule.Value, first.start.Location())
		if err != nil {
			return nil
		}
		opt.Dtstart = first.start
		if first.allDay && !opt.Until.IsZero() {
			opt.Until = untilDay(opt.Until, loc)
		}
		c.trimTimes(opt)
		r, err := rrule.NewRRule(*opt)
		if err != nil {
			return nil
		}
		set.RRule(r)
	}
	set.DTStart(first.start)
	set.RDate(first.start)
	for _, p := range rdates {
		for _, t := range c.times(p, loc) {
			set.RDate(atTimeOf(t, valueKind(p), first.start, loc))
		}
	}
	for _, p := range ev.Props.Values(ical.PropExceptionDates) {
		for _, t := range c.times(p, loc) {
			set.ExDate(atTimeOf(t, valueKind(p), first.start, loc))
		}
	}
	return set
}

// untilDay is the end of the last day an all-day series' UNTIL names, in
// the series' zone: recurrences are days, compared by date. UNTIL should
// then be a DATE, but programs write a date-time, either that day at
// 00:00 UTC (which west of UTC is still the day before) or the day's
// local midnight in UTC (which east of UTC is still the day before):
// the later of the day it writes and its day in the zone is meant.
func untilDay(until time.Time, loc *time.Location) time.Time {
	y, m, d := until.Date()
	written := time.Date(y, m, d, 0, 0, 0, 0, loc)
	y, m, d = until.In(loc).Date()
	local := time.Date(y, m, d, 0, 0, 0, 0, loc)
	return maxTime(written, local).AddDate(0, 0, 1).Add(-time.Second)
}

// maxTimesPerDay bounds the times of day a rule's BYHOUR, BYMINUTE and
// BYSECOND name together: rrule-go builds them all for each rule, and
// generates each of a period's days at each of them at once.
const maxTimesPerDay = 1440

// trimTimes keeps a rule's earliest times of day when its BYHOUR,
// BYMINUTE and BYSECOND name more than maxTimesPerDay together (a rule
// with every one of them names 86,400): seconds go first, then minutes.
// The rule is then cut off.
func (c calendar) trimTimes(opt *rrule.ROption) {
	n := func(l []int) int { return max(1, len(l)) }
	if n(opt.Byhour)*n(opt.Byminute)*n(opt.Bysecond) <= maxTimesPerDay {
		return
	}
	keep := func(l []int, room int) []int {
		if len(l) <= room {
			return l
		}
		slices.Sort(l)
		return l[:max(1, room)]
	}
	opt.Bysecond = keep(opt.Bysecond, maxTimesPerDay/(n(opt.Byhour)*n(opt.Byminute)))
	opt.Byminute = keep(opt.Byminute, maxTimesPerDay/(n(opt.Byhour)*n(opt.Bysecond)))
	c.work.cutAt(BoundRecurrence, int64(c.work.limits.MaxRecurrenceSteps))
}

// valueKind tells dates from date-times in an RDATE or EXDATE: a date
// names the recurrence of that day, at the series' time.
func valueKind(p ical.Prop) extract.DateKind {
	if p.Params.Get(ical.ParamValue) == string(ical.ValueDate) || len(strings.TrimSpace(strings.Split(p.Value, ",")[0])) == len("20060102") {
		return extract.DateOnly
	}
	return extract.ZonedDateTime
}

// overrides reads RECURRENCE-ID overrides: each replaces the recurrence it
// names; a moved one is rescheduled (with its original start as the
// previous one), a cancelled one cancelled.
func (c calendar) overrides(comps []*ical.Component, series schedule, loc *time.Location) map[int64]instance {
	if len(comps) == 0 || series.set == nil {
		return nil
	}
	out := make(map[int64]instance, len(comps))
	for _, o := range comps {
		orig, _, err := c.time(o.Props.Get(ical.PropRecurrenceID), loc)
		if err != nil {
			continue
		}
		if series.first.allDay {
			// An all-day series' recurrences are days: an override that
			// names one by a date-time in another zone (Exchange writes
			// RECURRENCE-ID;TZID=…:20240612T000000) names the day it
			// wrote, at the series' midnight.
			y, m, d := orig.Date()
			orig = time.Date(y, m, d, 0, 0, 0, 0, loc)
		}
		sp, ok := c.span(o, loc)
		if !ok {
			continue
		}
		in := instance{span: sp, status: icalStatus(o, series.status)}
		if !sp.start.Equal(orig) {
			prev := orig
			in.previous = &prev
			if in.status == domain.StatusScheduled {
				in.status = domain.StatusRescheduled
			}
		}
		out[orig.Unix()] = in
	}
	return out
}

// icalStatus: STATUS:CANCELLED is cancelled; TENTATIVE and CONFIRMED are
// scheduled; no STATUS keeps the fallback (an override inherits its
// series').
func icalStatus(ev *ical.Component, fallback string) string {
	switch strings.ToUpper(propValue(ev, ical.PropStatus)) {
	case "CANCELLED":
		return domain.StatusCancelled
	case "TENTATIVE", "CONFIRMED":
		if fallback == domain.StatusCancelled {
			return domain.StatusScheduled
		}
		return cmp.Or(fallback, domain.StatusScheduled)
	}
	return fallback
}

// location reads LOCATION (a line of text) and GEO ("lat;lng").
func (c calendar) location(ev *ical.Component) *domain.Location {
	a := parseAddressText(icalText(ev, ical.PropLocation))
	var coords *domain.Coordinates
	if lat, lng, ok := strings.Cut(propValue(ev, ical.PropGeo), ";"); ok {
		la, errLat := strconv.ParseFloat(strings.TrimSpace(lat), 64)
		ln, errLng := strconv.ParseFloat(strings.TrimSpace(lng), 64)
		if errLat == nil && errLng == nil && la >= -90 && la <= 90 && ln >= -180 && ln <= 180 {
			coords = &domain.Coordinates{Lat: la, Lng: ln}
		}
	}
	var online *domain.Online
	if u := extract.Resolve(nil, icalText(ev, ical.PropLocation)); u != "" {
		online, a = onlineAt(u, ""), address{}
	} else if conf := ev.Props.Get(ical.PropConference); conf != nil {
		if u := extract.Resolve(nil, conf.Value); u != "" {
			online = onlineAt(u, conf.Params.Get(ical.ParamLabel))
		}
	}
	return a.location(coords, online)
}

// description: X-ALT-DESC in HTML when given, else DESCRIPTION, which is
// plain text unless it plainly holds markup (Google Calendar writes HTML
// there).
func (c calendar) description(ev *ical.Component) string {
	for _, p := range ev.Props.Values("X-ALT-DESC") {
		if strings.EqualFold(p.Params.Get(ical.ParamFormatType), "text/html") {
			return unescapeText(p.Value)
		}
	}
	d := icalText(ev, ical.PropDescription)
	if looksLikeHTML(d) {
		return d
	}
	return textToHTML(d)
}

func (c calendar) stamp(ev *ical.Component, name string) *time.Time {
	t, _, err := c.time(ev.Props.Get(name), time.UTC)
	if err != nil {
		return nil
	}
	return &t
}

// icalOrganizer reads ORGANIZER;CN=Name:mailto:address.
func icalOrganizer(ev *ical.Component) *domain.Organizer {
	p := ev.Props.Get(ical.PropOrganizer)
	if p == nil {
		return nil
	}
	contact := strings.TrimSpace(p.Value)
	if len(contact) > 7 && strings.EqualFold(contact[:7], "mailto:") {
		contact = contact[7:]
	}
	name := cmp.Or(strings.Trim(p.Params.Get(ical.ParamCommonName), `"`), contact)
	if name == "" {
		return nil
	}
	return &domain.Organizer{Name: name, Contact: contact}
}

// icalImages reads IMAGE (RFC 7986) and image ATTACHments given by URL.
func icalImages(ev *ical.Component) []string {
	var out []string
	for _, name := range []string{ical.PropImage, ical.PropAttach} {
		for _, p := range ev.Props.Values(name) {
			isImage := name == ical.PropImage || strings.HasPrefix(strings.ToLower(p.Params.Get(ical.ParamFormatType)), "image/")
			if u := extract.Resolve(nil, p.Value); isImage && u != "" {
				out = append(out, u)
			}
		}
	}
	return dedupe(out)
}

func propValue(comp *ical.Component, name string) string {
	if p := comp.Props.Get(name); p != nil {
		return strings.TrimSpace(p.Value)
	}
	return ""
}

// icalText reads a TEXT value. Commas are kept: producers rarely escape
// them, so a TEXT list split would cut "Venue, Street, City" short.
func icalText(comp *ical.Component, name string) string {
	return strings.TrimSpace(unescapeText(propValue(comp, name)))
}

var textUnescaper = strings.NewReplacer(`\n`, "\n", `\N`, "\n", `\,`, ",", `\;`, ";", `\\`, `\`)

func unescapeText(s string) string { return textUnescaper.Replace(s) }

// resolve maps a TZID to an IANA zone (see resolveTZID); nil for none.
func (c calendar) resolve(tzid string) *time.Location {
	tzid = strings.Trim(strings.TrimSpace(tzid), `"`)
	if tzid == "" {
		return nil
	}
	if loc, ok := c.zones[tzid]; ok && loc != nil {
		return loc
	}
	return resolveTZID(tzid, nil)
}
