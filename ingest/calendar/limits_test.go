package calendar

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/feedsvc/feedsvc/ingest/calendar/calendartest"
	"github.com/feedsvc/feedsvc/ingest/document"
)

func calendarDoc(body []byte) document.Document {
	return document.Document{URL: "https://hostile.example/cal.ics", ContentType: "text/calendar", Body: body}
}

// noTimeBound lets a test see the other bounds: the wall-time bound would
// otherwise cut a slow run first.
var noTimeBound = Limits{MaxTime: time.Hour}

func TestAHostileCalendarIsCutAtItsBoundAndKeepsWhatFits(t *testing.T) {
	now := time.Date(2024, 10, 10, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name      string
		body      []byte
		limits    Limits
		bound     string
		maxEvents int
		minEvents int
	}{
		{"a yearly rule with every BYMONTH, BYMONTHDAY, BYHOUR, BYMINUTE and BYSECOND is cut by the recurrence bound",
			calendartest.EveryBy(), noTimeBound, BoundRecurrence, 1, 1},
		{"1,000 secondly rules begun years ago share one recurrence budget",
			calendartest.Secondly(1000), noTimeBound, BoundRecurrence, 1000, 1000},
		{"rules that never yield an instance stop at the budget instead of walking to year 9999",
			calendartest.Impossible(20), noTimeBound, BoundRecurrence, 60, 60},
		{"5 MiB of small events is read up to four VEVENTs per event kept, not decoded whole",
			calendartest.ManySmall(5 << 20), noTimeBound, BoundHappenings, DefaultMaxHappenings, DefaultMaxHappenings},
		{"a calendar is read up to the byte bound (20 KiB: 271 small events)",
			calendartest.ManySmall(5 << 20), Limits{MaxTime: time.Hour, MaxCalendarBytes: 20 << 10}, BoundCalendarBytes, 271, 271},
		{"a calendar under the byte bound with more events than the events bound keeps the first ones",
			calendartest.ManySmall(150 << 10), noTimeBound, BoundHappenings, DefaultMaxHappenings, DefaultMaxHappenings},
		{"a document whose time is up keeps what it read so far",
			calendartest.Secondly(50), Limits{MaxTime: time.Nanosecond}, BoundTime, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := Extract(calendarDoc(tt.body), Options{Now: now, Limits: tt.limits})
			if err != nil {
				t.Fatal(err)
			}
			if res.CutOff == nil || res.CutOff.Bound != tt.bound {
				t.Fatalf("cut off %v, want by %s", res.CutOff, tt.bound)
			}
			if n := len(res.Happenings); n > tt.maxEvents || n < tt.minEvents {
				t.Fatalf("%d events, want %d to %d", n, tt.minEvents, tt.maxEvents)
			}
			for _, e := range res.Happenings {
				if len(e.Instances) > maxInstances {
					t.Fatalf("event %s has %d instances", e.Identity, len(e.Instances))
				}
			}
		})
	}
}

func TestTheFirstEventsOfACutCalendarAreKeptInDocumentOrder(t *testing.T) {
	res, err := Extract(calendarDoc(calendartest.ManySmall(150<<10)), Options{Now: crawlNow, Limits: Limits{MaxHappenings: 10}})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range res.Happenings {
		got = append(got, e.Title)
	}
	if want := "E0 E1 E2 E3 E4 E5 E6 E7 E8 E9"; strings.Join(got, " ") != want {
		t.Fatalf("kept %q, want %q", got, want)
	}
}

func TestAnHonestCalendarIsNotCutOff(t *testing.T) {
	res := extractFixture(t, "google-export.ics", "https://calendar.example/basic.ics")
	if res.CutOff != nil {
		t.Fatalf("cut off %v", res.CutOff)
	}
}

func TestACutCalendarEndsAfterItsLastWholeEvent(t *testing.T) {
	body := []byte("BEGIN:VCALENDAR\r\nBEGIN:VEVENT\r\nUID:a\r\nEND:VEVENT\r\nBEGIN:VEVENT\r\nUID:b\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n")
	want := "BEGIN:VCALENDAR\r\nBEGIN:VEVENT\r\nUID:a\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"
	tests := []struct {
		name              string
		limit, maxVEvents int
		bound             string
	}{
		{"by bytes", bytes.Index(body, []byte("UID:b")), 10, BoundCalendarBytes},
		{"by VEVENTs", len(body), 1, BoundHappenings},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cut, bound := cutCalendar(body, tt.limit, tt.maxVEvents)
			if bound != tt.bound || string(cut) != want {
				t.Fatalf("cut %q by %q, want %q by %q", cut, bound, want, tt.bound)
			}
		})
	}
	if cut, bound := cutCalendar(body, len(body), 2); bound != "" || !bytes.Equal(cut, body) {
		t.Fatalf("a calendar within both bounds was cut by %q: %q", bound, cut)
	}
}

// TestReadingEveryHostileCalendarStaysWithin256MBOfTheBaseline measures
// the process's peak resident memory (VmHWM) around reading the probe's
// calendars; before the bounds the every-by calendar alone took 2.8 GB.
func TestReadingEveryHostileCalendarStaysWithin256MBOfTheBaseline(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc/self/status")
	}
	cals := calendartest.Calendars()
	runtime.GC()
	base := procStatusKB(t, "VmRSS")
	resetPeak(t)
	for _, c := range cals {
		res, err := Extract(calendarDoc(c.Body), Options{Now: crawlNow})
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		t.Logf("%s: %d events, cut off %v, peak RSS %d MB over baseline", c.Name, len(res.Happenings), res.CutOff, (procStatusKB(t, "VmHWM")-base)/1024)
	}
	if grown := procStatusKB(t, "VmHWM") - base; grown > 256*1024 {
		t.Fatalf("peak RSS grew %d MB over the baseline, want at most 256", grown/1024)
	}
}

// resetPeak resets VmHWM to the current RSS (Linux 4.0+), so that the
// peak measured is this test's, not an earlier one's.
func resetPeak(t *testing.T) {
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		t.Skipf("cannot reset the peak RSS: %v", err)
	}
}

func procStatusKB(t *testing.T, field string) int {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if v, ok := strings.CutPrefix(s.Text(), field+":"); ok {
			n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatal(fmt.Sprintf("no %s in /proc/self/status", field))
	return 0
}

// BenchmarkHostileCalendar reads each of the probe's hostile calendars
// with the default bounds: what one costs is what the bounds allow.
func BenchmarkHostileCalendar(b *testing.B) {
	for _, c := range calendartest.Calendars() {
		doc := calendarDoc(c.Body)
		b.Run(c.Name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Extract(doc, Options{Now: crawlNow}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
