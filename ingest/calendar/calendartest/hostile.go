// Package eventstest makes the hostile documents of the probe that found
// extract/events unbounded (issue 19), for the tests of every path that
// reads documents: extraction, POST /parse, the crawler.
package calendartest

import (
	"bytes"
	"fmt"
	"strings"
)

// Hostile is one hostile document.
type Hostile struct {
	Name string
	// Body is an iCalendar file.
	Body []byte
}

// Calendars are the probe's hostile calendars:
//
//   - every-by: one VEVENT whose FREQ=YEARLY rule names every BYMONTH,
//     BYMONTHDAY, BYHOUR, BYMINUTE and BYSECOND (about 31 million
//     instances a year, all generated at once by the rule library);
//   - secondly: 1,000 FREQ=SECONDLY rules begun years before now;
//   - impossible: rules that never yield an instance (the rule library
//     walks to year 9999 looking for one);
//   - many-small: 5 MiB of small VEVENTs (65,800).
func Calendars() []Hostile {
	return []Hostile{
		{"every-by", EveryBy()},
		{"secondly", Secondly(1000)},
		{"impossible", Impossible(20)},
		{"many-small", ManySmall(5 << 20)},
	}
}

func calendar(events func(b *bytes.Buffer)) []byte {
	var b bytes.Buffer
	b.WriteString("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//hostile//EN\r\n")
	events(&b)
	b.WriteString("END:VCALENDAR\r\n")
	return b.Bytes()
}

func vevent(b *bytes.Buffer, uid, start, rule string) {
	fmt.Fprintf(b, "BEGIN:VEVENT\r\nUID:%s\r\nDTSTAMP:20240101T000000Z\r\nDTSTART:%s\r\nSUMMARY:Event %s\r\n", uid, start, uid)
	if rule != "" {
		fmt.Fprintf(b, "RRULE:%s\r\n", rule)
	}
	b.WriteString("END:VEVENT\r\n")
}

func upto(from, to int) string {
	var s []string
	for i := from; i <= to; i++ {
		s = append(s, fmt.Sprint(i))
	}
	return strings.Join(s, ",")
}

// EveryBy is the every-by calendar.
func EveryBy() []byte {
	rule := "FREQ=YEARLY;BYMONTH=" + upto(1, 12) + ";BYMONTHDAY=" + upto(1, 31) + ";BYHOUR=" + upto(0, 23) +
		";BYMINUTE=" + upto(0, 59) + ";BYSECOND=" + upto(0, 59)
	return calendar(func(b *bytes.Buffer) { vevent(b, "every-by", "20200101T000000Z", rule) })
}

// Secondly is a calendar of n FREQ=SECONDLY rules begun in 2020.
func Secondly(n int) []byte {
	return calendar(func(b *bytes.Buffer) {
		for i := range n {
			vevent(b, fmt.Sprintf("secondly-%d", i), "20200101T000000Z", "FREQ=SECONDLY")
		}
	})
}

// Impossible is a calendar of n rules of each kind that never yields an
// instance after its start.
func Impossible(n int) []byte {
	rules := []string{"FREQ=MINUTELY;BYSETPOS=2", "FREQ=SECONDLY;BYSETPOS=2", "FREQ=DAILY;BYMONTH=2;BYMONTHDAY=30"}
	return calendar(func(b *bytes.Buffer) {
		for i := range n {
			for j, r := range rules {
				vevent(b, fmt.Sprintf("impossible-%d-%d", i, j), "20200101T000000Z", r)
			}
		}
	})
}

// ManySmall is a calendar of small one-off VEVENTs about size bytes long.
func ManySmall(size int) []byte {
	return calendar(func(b *bytes.Buffer) {
		for i := 0; b.Len() < size; i++ {
			fmt.Fprintf(b, "BEGIN:VEVENT\r\nUID:s%d\r\nDTSTART:20241015T%02d0000Z\r\nSUMMARY:E%d\r\nEND:VEVENT\r\n", i, i%24, i)
		}
	})
}
