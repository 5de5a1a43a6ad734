package calendar

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/teambition/rrule-go"
)

// Layouts of displayText (see doc.go): English, local time of the event's
// zone, 24-hour clock.
const (
	dayLayout  = "Mon 2 Jan 2006"
	timeLayout = "15:04"
)

// displayText says in words when an event happens.
func displayText(s schedule, instances []instance, loc *time.Location) string {
	switch {
	case s.set != nil && s.set.GetRRule() != nil:
		return ruleText(s.set.GetRRule().OrigOptions, s.first, loc, s.openStart, occurring(s.set))
	case len(instances) > 1 || s.set != nil:
		return datesText(instances, loc)
	case len(instances) == 1:
		return spanText(instances[0].span, loc)
	default:
		return spanText(s.first, loc)
	}
}

// spanText: "Tue 15 Oct 2024, 19:00–22:00 (Europe/Berlin)", "Sat 8 Jun
// 2024", "Fri 7 Jun 2024 – Sun 9 Jun 2024", "Fri 7 Jun 2024, 18:00 – Sun 9
// Jun 2024, 23:00 (Europe/Berlin)".
func spanText(sp span, loc *time.Location) string {
	start := sp.start.In(loc)
	if sp.allDay {
		last := start
		if !sp.end.IsZero() {
			last = sp.end.In(loc).AddDate(0, 0, -1)
		}
		if !last.After(start) {
			return start.Format(dayLayout)
		}
		return start.Format(dayLayout) + " – " + last.Format(dayLayout)
	}
	text := start.Format(dayLayout) + ", " + start.Format(timeLayout)
	if !sp.end.IsZero() {
		end := sp.end.In(loc)
		if oneDay(start, end) {
			text += "–" + end.Format(timeLayout)
		} else {
			text += " – " + end.Format(dayLayout) + ", " + end.Format(timeLayout)
		}
	}
	return text + " (" + loc.String() + ")"
}

// datesText: "3 dates, Tue 14 May 2024 – Sat 1 Jun 2024".
func datesText(instances []instance, loc *time.Location) string {
	if len(instances) == 0 {
		return ""
	}
	first, last := instances[0].span.start.In(loc), instances[len(instances)-1].span.start.In(loc)
	return fmt.Sprintf("%d dates, %s – %s", len(instances), first.Format(dayLayout), last.Format(dayLayout))
}

var weekdayNames = []string{"Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"}

var units = map[rrule.Frequency][2]string{
	rrule.YEARLY: {"year", "years"}, rrule.MONTHLY: {"month", "months"}, rrule.WEEKLY: {"week", "weeks"},
	rrule.DAILY: {"day", "days"}, rrule.HOURLY: {"hour", "hours"}, rrule.MINUTELY: {"minute", "minutes"},
	rrule.SECONDLY: {"second", "seconds"},
}

// ruleText: "Every week on Tuesday, 19:00–21:00 (Europe/Berlin), until Tue
// 17 Dec 2024" (no "from" when the rule stated no start), "Every 2 weeks on Monday and Thursday, ...", "Every month
// on day 1 and 15, ...", "Every day, ... , 10 times".
// occurs is how many times a counted rule's set occurs (see occurring).
func ruleText(o rrule.ROption, first span, loc *time.Location, openStart bool, occurs int) string {
	unit := units[o.Freq]
	var b strings.Builder
	if o.Interval > 1 {
		fmt.Fprintf(&b, "Every %d %s", o.Interval, unit[1])
	} else {
		b.WriteString("Every " + unit[0])
	}
	if len(o.Byweekday) > 0 {
		names := make([]string, 0, len(o.Byweekday))
		for _, d := range o.Byweekday {
			name := weekdayNames[d.Day()]
			if n := d.N(); n != 0 {
				name = ordinal(n) + " " + name
			}
			names = append(names, name)
		}
		b.WriteString(" on " + joinAnd(names))
	}
	if len(o.Bymonthday) > 0 {
		days := make([]string, 0, len(o.Bymonthday))
		for _, d := range o.Bymonthday {
			days = append(days, strconv.Itoa(d))
		}
		b.WriteString(" on day " + joinAnd(days))
	}
	start := first.start.In(loc)
	if !first.allDay {
		b.WriteString(", " + start.Format(timeLayout))
		if !first.end.IsZero() {
			b.WriteString("–" + first.end.In(loc).Format(timeLayout))
		}
		b.WriteString(" (" + loc.String() + ")")
	}
	if !openStart {
		b.WriteString(", from " + start.Format(dayLayout))
	}
	switch {
	case !o.Until.IsZero():
		b.WriteString(", until " + o.Until.In(loc).Format(dayLayout))
	case o.Count > 0 && occurs >= 0:
		fmt.Fprintf(&b, ", %d times", occurs)
	case o.Count > 0:
		fmt.Fprintf(&b, ", %d times", o.Count)
	}
	return b.String()
}

// occurring counts the occurrences of a set whose rule has a COUNT: the
// rule's, less those an EXDATE takes out, plus its RDATEs (COUNT=25 with
// one EXDATE occurs 24 times). Without EXDATEs and RDATEs that is the
// COUNT itself. Otherwise a copy of the rule is walked with a budget of
// its own (expansion has spent the document's on the window) of
// countSteps; -1 when it is spent or the rule has no COUNT, and the text
// says the COUNT.
func occurring(set *rrule.Set) int {
	r := set.GetRRule()
	if r == nil || r.OrigOptions.Count <= 0 || !r.OrigOptions.Until.IsZero() {
		return -1
	}
	if len(set.GetExDate()) == 0 && len(set.GetRDate()) == 0 {
		return r.OrigOptions.Count
	}
	rule := *r
	left := countSteps
	rule.SetBudget(&left)
	counted := &rrule.Set{}
	counted.RRule(&rule)
	counted.SetRDates(set.GetRDate())
	counted.SetExDates(set.GetExDate())
	n := 0
	next := counted.Iterator()
	for _, ok := next(); ok; _, ok = next() {
		n++
	}
	if left <= 0 {
		return -1
	}
	return n
}

// countSteps bounds the walk of occurring: a few thousand occurrences of
// a dense rule, fewer of a sparse one.
const countSteps = 20_000

func ordinal(n int) string {
	switch n {
	case -1:
		return "last"
	case 1:
		return "1st"
	case 2:
		return "2nd"
	case 3:
		return "3rd"
	}
	return strconv.Itoa(n) + "th"
}

func joinAnd(list []string) string {
	if len(list) < 2 {
		return strings.Join(list, "")
	}
	return strings.Join(list[:len(list)-1], ", ") + " and " + list[len(list)-1]
}
