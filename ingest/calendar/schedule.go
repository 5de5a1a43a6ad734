package calendar

import (
	"cmp"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/emersion/go-ical"
	"github.com/teambition/rrule-go"

	"github.com/feedsvc/feedsvc/ingest/extract"
)

// schedule reads a schema.org Schedule (eventSchedule) into a recurrence
// rule: repeatFrequency, byDay, byMonthDay, byMonth, byMonthWeek,
// startDate/endDate of the series, startTime/endTime or duration,
// repeatCount and exceptDate. The event's own start, when the schedule
// lacks a part, supplies it; a schedule without any start is expanded
// from the window's start. ok is false when the schedule states no
// recurrence, so the event is read as a one-off.
func (g graph) schedule(n map[string]any, event span, eventOK bool, loc *time.Location) (schedule, bool) {
	opt, ok := g.ruleOptions(n)
	if !ok {
		return schedule{}, false
	}
	first, ok := scheduleStart(n, event, eventOK, g.from, loc)
	if !ok {
		return schedule{}, false
	}
	_, startKind := extract.ParseDateIn(text(n["startDate"]), loc)
	openStart := !eventOK && startKind == extract.NoDate
	opt.Dtstart = first.start
	if until, kind := extract.ParseDateIn(text(n["endDate"]), loc); kind != extract.NoDate {
		y, m, d := until.In(loc).Date()
		opt.Until = time.Date(y, m, d, 23, 59, 59, 0, loc)
	}
	if c, ok := number(n["repeatCount"]); ok && c > 0 && c < maxRuleSteps {
		opt.Count = int(c)
	}
	rule, err := rrule.NewRRule(opt)
	if err != nil {
		return schedule{}, false
	}
	set := &rrule.Set{}
	set.RRule(rule)
	set.DTStart(first.start)
	for _, e := range g.list(n["exceptDate"]) {
		if t, kind := extract.ParseDateIn(text(e), loc); kind != extract.NoDate {
			set.ExDate(atTimeOf(t, kind, first.start, loc))
		}
	}
	return schedule{first: first, set: set, days: spanDays(first, loc), openStart: openStart}, true
}

// scheduleStart is the first recurrence's span: the schedule's startDate
// and startTime (else the event's, else the window's start, from),
// lasting the schedule's duration or endTime (else the event's length).
func scheduleStart(n map[string]any, event span, eventOK bool, from time.Time, loc *time.Location) (span, bool) {
	day, kind := extract.ParseDateIn(text(n["startDate"]), loc)
	switch {
	case kind != extract.NoDate:
	case eventOK:
		day, kind = event.start.In(loc), extract.LocalDateTime
		if event.allDay {
			kind = extract.DateOnly
		}
	case from.IsZero():
		return span{}, false
	default:
		// A schedule that states no start ("every second Saturday") runs
		// now: it is expanded from the window's start.
		day, kind = from.In(loc), extract.DateOnly
	}
	y, m, d := day.In(loc).Date()
	startClock, hasStart := clock(text(n["startTime"]))
	switch {
	case hasStart:
	case kind != extract.DateOnly:
		startClock = day.In(loc).Sub(time.Date(y, m, d, 0, 0, 0, 0, loc))
	case eventOK && !event.allDay:
		startClock = event.start.In(loc).Sub(midnight(event.start.In(loc)))
	default:
		start := time.Date(y, m, d, 0, 0, 0, 0, loc)
		return span{start: start, end: nextMidnight(start), allDay: true}, true
	}
	start := time.Date(y, m, d, 0, 0, 0, 0, loc).Add(startClock)
	sp := span{start: start}
	if dur, ok := isoDuration(text(n["duration"])); ok {
		sp.end = start.Add(dur)
	} else if endClock, ok := clock(text(n["endTime"])); ok && endClock > startClock {
		sp.end = time.Date(y, m, d, 0, 0, 0, 0, loc).Add(endClock)
	} else if eventOK && !event.end.IsZero() && !event.allDay {
		sp.end = start.Add(event.end.Sub(event.start))
	}
	return sp, true
}

// clock reads a time of day ("19:00", "19:00:00", "T19:00:00+02:00": an
// offset is dropped, the time is local to the event).
func clock(s string) (time.Duration, bool) {
	s = strings.TrimPrefix(strings.TrimSpace(s), "T")
	if len(s) < 5 {
		return 0, false
	}
	h, errH := strconv.Atoi(s[0:2])
	m, errM := strconv.Atoi(s[3:5])
	if errH != nil || errM != nil || s[2] != ':' || h > 23 || m > 59 {
		return 0, false
	}
	return time.Duration(h)*time.Hour + time.Duration(m)*time.Minute, true
}

// atTimeOf places an excepted date at the series' time of day; a
// date-time is taken as it is.
func atTimeOf(t time.Time, kind extract.DateKind, first time.Time, loc *time.Location) time.Time {
	if kind != extract.DateOnly {
		return t
	}
	y, m, d := t.In(loc).Date()
	f := first.In(loc)
	return time.Date(y, m, d, f.Hour(), f.Minute(), f.Second(), 0, loc)
}

var frequencyPattern = regexp.MustCompile(`^P(\d{1,3})([DWMY])$`)

var frequencies = map[string]rrule.Frequency{"D": rrule.DAILY, "W": rrule.WEEKLY, "M": rrule.MONTHLY, "Y": rrule.YEARLY}

var frequencyWords = map[string]string{"daily": "P1D", "weekly": "P1W", "monthly": "P1M", "yearly": "P1Y", "annually": "P1Y"}

// ruleOptions reads the recurrence parts of a Schedule. A schedule with
// byDay and no frequency is weekly; with byMonthDay, monthly.
func (g graph) ruleOptions(n map[string]any) (rrule.ROption, bool) {
	var opt rrule.ROption
	freq := strings.ToUpper(text(n["repeatFrequency"]))
	if w, ok := frequencyWords[strings.ToLower(freq)]; ok {
		freq = w
	}
	weekdays := g.weekdays(n["byDay"])
	monthDays := ints(g.list(n["byMonthDay"]), -31, 31)
	switch m := frequencyPattern.FindStringSubmatch(freq); {
	case m != nil:
		opt.Freq = frequencies[m[2]]
		opt.Interval, _ = strconv.Atoi(m[1])
	case len(weekdays) > 0 && slices.ContainsFunc(weekdays, func(wd rrule.Weekday) bool { return wd.N() != 0 }):
		// "2MO" is the second Monday of a month.
		opt.Freq, opt.Interval = rrule.MONTHLY, 1
	case len(weekdays) > 0:
		opt.Freq, opt.Interval = rrule.WEEKLY, 1
	case len(monthDays) > 0:
		opt.Freq, opt.Interval = rrule.MONTHLY, 1
	default:
		return opt, false
	}
	if opt.Interval < 1 {
		return opt, false
	}
	weeks := ints(g.list(n["byMonthWeek"]), -5, 5)
	for _, wd := range weekdays {
		if len(weeks) == 0 || wd.N() != 0 {
			opt.Byweekday = append(opt.Byweekday, wd)
			continue
		}
		for _, w := range weeks {
			opt.Byweekday = append(opt.Byweekday, wd.Nth(w))
		}
	}
	opt.Bymonthday = monthDays
	opt.Bymonth = ints(g.list(n["byMonth"]), 1, 12)
	return opt, true
}

var weekdaysByName = map[string]rrule.Weekday{
	"monday": rrule.MO, "tuesday": rrule.TU, "wednesday": rrule.WE, "thursday": rrule.TH,
	"friday": rrule.FR, "saturday": rrule.SA, "sunday": rrule.SU,
	"mo": rrule.MO, "tu": rrule.TU, "we": rrule.WE, "th": rrule.TH, "fr": rrule.FR, "sa": rrule.SA, "su": rrule.SU,
}

// weekdays reads byDay: schema.org DayOfWeek URLs or names, or iCalendar
// two-letter days, with an ordinal in iCalendar's form ("2MO", "-1FR": the
// second Monday, the last Friday of the period).
func (g graph) weekdays(v any) []rrule.Weekday {
	var out []rrule.Weekday
	for _, e := range g.list(v) {
		s := text(e)
		if m, ok := e.(map[string]any); ok && s == "" {
			s = cmp.Or(text(m["@id"]), text(m["name"]))
		}
		if i := strings.LastIndexAny(s, "/:"); i >= 0 {
			s = s[i+1:]
		}
		s = strings.ToLower(strings.TrimSpace(s))
		nth := 0
		if m := ordinalDay.FindStringSubmatch(s); m != nil {
			nth, _ = strconv.Atoi(m[1])
			s = m[2]
		}
		wd, ok := weekdaysByName[s]
		switch {
		case !ok:
		case nth != 0:
			out = append(out, wd.Nth(nth))
		default:
			out = append(out, wd)
		}
	}
	return out
}

// ordinalDay is an iCalendar BYDAY value with an ordinal: "2mo", "-1fr",
// "+3tu" (lower-cased).
var ordinalDay = regexp.MustCompile(`^([+-]?[1-5])([a-z]{2})$`)

func ints(list []any, lo, hi int) []int {
	var out []int
	for _, e := range list {
		f, ok := number(e)
		if !ok || f != float64(int(f)) || int(f) < lo || int(f) > hi || f == 0 {
			continue
		}
		out = append(out, int(f))
	}
	return out
}

// isoDuration reads an ISO 8601 duration of days, weeks, hours, minutes
// and seconds (PT2H, P1DT3H), with the iCalendar library's parser: the
// two formats share the syntax.
func isoDuration(s string) (time.Duration, bool) {
	if s == "" {
		return 0, false
	}
	p := ical.NewProp(ical.PropDuration)
	p.Value = s
	d, err := p.Duration()
	return d, err == nil && d > 0
}
