package calendar

import (
	"time"

	"github.com/teambition/rrule-go"

	"github.com/feedsvc/feedsvc/domain"
)

// Bounds of one event's expansion. They match the domain's, which rejects
// an event beyond them: expansion stops at them instead, and the event's
// horizon says how far it got.
const (
	maxInstances   = 1000
	maxOccurrences = 2000
	// maxRuleSteps bounds the walk of a recurrence rule from its start: a
	// minutely rule begun years ago must not spin.
	maxRuleSteps = 200_000
	// longSpanDays: a span longer than this (a permanent exhibition) keeps
	// its first and last day and the days within the window, not every day.
	longSpanDays = 400
	// ongoingDays: a one-off span longer than this is "ongoing".
	ongoingDays = 14
	// nightEndsBy: a timed span that ends on the next local day before this
	// hour is one night out, not two days.
	nightEndsBy = 6
)

// singleKey is the key of the instance of an event that happens once: its
// id then survives a change of date.
const singleKey = "single"

// span is one happening's time: a timed start and end (zero end: none
// given) or, when allDay, local midnights with end exclusive.
type span struct {
	start, end time.Time
	allDay     bool
}

// instance is one happening before it is split into local days.
type instance struct {
	key      string
	span     span
	status   string
	previous *time.Time
}

// schedule is when an event happens, as a format stated it.
type schedule struct {
	first    span
	status   string
	previous *time.Time
	// set is the recurrence (RRULE, RDATE, EXDATE or a schema.org
	// eventSchedule) starting at first.start; nil for a one-off event.
	set *rrule.Set
	// duration of each recurrence: first's, kept apart because an all-day
	// recurrence lasts a number of days, not hours.
	days int
	// overrides replace the recurrences they name, by original start.
	overrides map[int64]instance
	// dates are the instances of an event listed date by date (one event
	// found several times in a document, once per date), by start.
	dates []instance
	// openStart: the rule states no start (a schema.org eventSchedule
	// without one) and runs from the window's start, which is no date of
	// the event's.
	openStart bool
}

// window is the span recurrences are expanded over, with the document's
// budget.
type window struct {
	from, to time.Time
	work     *work
}

// newWindow: from the first of the month a week before now (UTC), so that
// every crawl in a month expands the same past instances and a re-crawl
// is no change; to now + horizon.
func newWindow(opts Options) window {
	past := opts.Now.UTC().AddDate(0, 0, -7)
	return window{
		from: time.Date(past.Year(), past.Month(), 1, 0, 0, 0, 0, time.UTC),
		to:   opts.Now.Add(opts.Horizon),
		work: opts.work,
	}
}

// expand lists an event's instances: one for a one-off event, the
// recurrences within the window for a recurring one (with the latest one
// before it, or the first one after it, when none falls inside, so an
// event always has one). horizon is where a recurring expansion stopped.
func (s schedule) expand(w window, loc *time.Location) (out []instance, horizon *time.Time) {
	if len(s.dates) > 0 {
		return s.dates[:min(len(s.dates), maxInstances)], nil
	}
	if s.set == nil {
		return []instance{{key: singleKey, span: s.first, status: s.status, previous: s.previous}}, nil
	}
	end := w.to
	used := map[int64]bool{}
	var before, after time.Time
	occurrences := 0
	spent := w.spend(s.set.GetRRule())
	next := s.set.Iterator()
	for step := 0; step < maxRuleSteps; step++ {
		if step%256 == 255 && w.work.late() {
			end = t0(out, w.to)
			break
		}
		t, ok := next()
		if !ok {
			break
		}
		if _, ok := s.overrides[t.Unix()]; ok {
			used[t.Unix()] = true
		}
		if t.Before(w.from) {
			before = t
			continue
		}
		if t.After(w.to) {
			after = t
			break
		}
		in := s.recurrence(t, loc)
		n := len(days(in.span, loc, w))
		if len(out) > 0 && (len(out) == maxInstances || occurrences+n > maxOccurrences) {
			end = out[len(out)-1].span.start
			break
		}
		out = append(out, in)
		occurrences += n
	}
	if spent() {
		end = t0(out, w.to)
	}
	out = s.movedIn(out, used, w)
	switch {
	case len(out) > 0:
	case !before.IsZero():
		out = []instance{s.recurrence(before, loc)}
	case !after.IsZero():
		out = []instance{s.recurrence(after, loc)}
	}
	return out, &end
}

// t0 is where an expansion cut short stopped: the start of the last
// instance kept, else the window's end.
func t0(out []instance, end time.Time) time.Time {
	if len(out) > 0 {
		return out[len(out)-1].span.start
	}
	return end
}

// spend gives a rule its share of the document's recurrence budget (at
// most maxRuleSteps) and returns what, once the rule is expanded, takes
// the steps it used from the document's budget and tells whether the rule
// spent its share, i.e. was cut off where it stopped.
func (w window) spend(r *rrule.RRule) (spent func() bool) {
	if r == nil || w.work == nil {
		return func() bool { return false }
	}
	share := min(maxRuleSteps, w.work.steps)
	left := share
	r.SetBudget(&left)
	return func() bool {
		w.work.steps -= share - left
		if left > 0 {
			return false
		}
		w.work.cutAt(BoundRecurrence, int64(w.work.limits.MaxRecurrenceSteps))
		return true
	}
}

// recurrence is the instance that starts at t: an override when one names
// t, else t with the schedule's duration and status.
func (s schedule) recurrence(t time.Time, loc *time.Location) instance {
	key := t.UTC().Format(time.RFC3339)
	if ov, ok := s.overrides[t.Unix()]; ok {
		ov.key = key
		return ov
	}
	return instance{key: key, span: s.spanAt(t, loc), status: s.status}
}

func (s schedule) spanAt(t time.Time, loc *time.Location) span {
	if s.first.allDay {
		y, m, d := t.In(loc).Date()
		return span{start: time.Date(y, m, d, 0, 0, 0, 0, loc), end: time.Date(y, m, d+max(s.days, 1), 0, 0, 0, 0, loc), allDay: true}
	}
	sp := span{start: t}
	if !s.first.end.IsZero() {
		sp.end = t.Add(s.first.end.Sub(s.first.start))
	}
	return sp
}

// movedIn adds the overrides whose recurrence the rule no longer yields
// (its date was excluded, or it lies outside the window) but that happen
// within the window, in start order.
func (s schedule) movedIn(out []instance, used map[int64]bool, w window) []instance {
	for orig, ov := range s.overrides {
		if used[orig] || ov.span.start.Before(w.from) || ov.span.start.After(w.to) || len(out) >= maxInstances {
			continue
		}
		ov.key = time.Unix(orig, 0).UTC().Format(time.RFC3339)
		i := len(out)
		for i > 0 && out[i-1].span.start.After(ov.span.start) {
			i--
		}
		out = append(out[:i], append([]instance{ov}, out[i:]...)...)
	}
	return out
}

// occurrences splits an instance into local days (api.md 2.9: a multi-day
// event has one occurrence per day).
func occurrences(sp span, loc *time.Location, w window) []domain.Occurrence {
	ds := days(sp, loc, w)
	out := make([]domain.Occurrence, 0, len(ds))
	for _, d := range ds {
		o := domain.Occurrence{Start: d.start.UTC(), AllDay: sp.allDay}
		if !d.end.IsZero() {
			end := d.end.UTC()
			o.End = &end
		}
		out = append(out, o)
	}
	return out
}

// days are the local days of a span: the whole span when it stays within
// one day (or one night), else one piece per local day, cut at local
// midnights. A span longer than longSpanDays keeps its first and last day
// and the days within the window.
func days(sp span, loc *time.Location, w window) []span {
	start, end := sp.start.In(loc), sp.end.In(loc)
	if sp.end.IsZero() || !end.After(start) {
		return []span{{start: start, allDay: sp.allDay}}
	}
	if !sp.allDay && oneDay(start, end) {
		return []span{sp}
	}
	var out []span
	total := 0
	for day := midnight(start); day.Before(end); day = nextMidnight(day) {
		piece := span{start: maxTime(day, start), end: minTime(nextMidnight(day), end), allDay: sp.allDay}
		total++
		if !piece.end.After(piece.start) {
			continue
		}
		out = append(out, piece)
	}
	if total <= longSpanDays {
		return out
	}
	kept := []span{out[0]}
	for _, d := range out[1 : len(out)-1] {
		if d.end.After(w.from) && d.start.Before(w.to) {
			kept = append(kept, d)
		}
	}
	return append(kept, out[len(out)-1])
}

func oneDay(start, end time.Time) bool {
	if end.Sub(start) >= 24*time.Hour {
		return false
	}
	next := nextMidnight(midnight(start))
	return !end.After(next) || end.Hour() < nightEndsBy && !end.After(next.Add(nightEndsBy*time.Hour))
}

func midnight(t time.Time) time.Time {
	y, m, d := t.Date()
	return time.Date(y, m, d, 0, 0, 0, 0, t.Location())
}

// nextMidnight is the next local midnight: 23 or 25 hours on the day a
// clock changes.
func nextMidnight(t time.Time) time.Time {
	y, m, d := t.Date()
	return time.Date(y, m, d+1, 0, 0, 0, 0, t.Location())
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// spanDays is how many local days a span touches.
func spanDays(sp span, loc *time.Location) int {
	if sp.end.IsZero() {
		return 1
	}
	n := 0
	end := sp.end.In(loc)
	for day := midnight(sp.start.In(loc)); day.Before(end) && n <= longSpanDays+1; day = nextMidnight(day) {
		n++
	}
	return max(n, 1)
}
