package calendar

import (
	"bytes"
	"fmt"
	"runtime"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Bounds of one document, whatever reaches it (a crawl, a backfill, POST
// /parse, a calendar a page links to, a platform post). A document over a
// bound is cut off: what fits is kept, in one pass, and Result.CutOff says
// which bound cut it. Nothing a document holds makes its reading take
// more than these, so a hostile calendar costs what a large honest one
// does. The bounds' values are metric labels and configuration words
// (events_per_document, FEEDSVC_MAX_EVENTS_PER_DOCUMENT) and keep the
// API's word "event".
const (
	// BoundCalendarBytes: an iCalendar file longer than this is read up
	// to the last VEVENT that begins within it.
	BoundCalendarBytes = "calendar_bytes"
	// BoundHappenings: happenings beyond this many in one document are left out.
	BoundHappenings = "events_per_document"
	// BoundRecurrence: the work of expanding a document's recurrence
	// rules (periods looked at and instances generated) stops here.
	BoundRecurrence = "recurrence_steps_per_document"
	// BoundTime: reading a document stops after this much wall time.
	BoundTime = "time_per_document"
	// BoundSourceHappenings: happenings beyond this many in one crawl of a source
	// are left for the next crawl (applied by the crawler).
	BoundSourceHappenings = "events_per_source_crawl"
)

// Defaults of Limits, generous for honest documents: a university's
// calendar holds a few hundred events, a theatre's a few thousand
// instances.
const (
	DefaultMaxCalendarBytes      = 2 << 20
	DefaultMaxHappenings         = 1000
	DefaultMaxRecurrenceSteps    = 500_000
	DefaultMaxTime               = 5 * time.Second
	DefaultMaxHappeningsPerCrawl = 5000
)

// Limits bound the work one document may cost. Zero fields take their
// defaults.
type Limits struct {
	// MaxCalendarBytes bounds the part of an iCalendar file that is read.
	MaxCalendarBytes int
	// MaxHappenings bounds the happenings kept of one document.
	MaxHappenings int
	// MaxRecurrenceSteps bounds the expansion of all of a document's
	// recurrence rules together; each rule also stops at maxRuleSteps,
	// at its 1000th instance and at the horizon, whichever comes first.
	MaxRecurrenceSteps int
	// MaxTime bounds the wall time of reading one document.
	MaxTime time.Duration
}

func (l Limits) withDefaults() Limits {
	if l.MaxCalendarBytes <= 0 {
		l.MaxCalendarBytes = DefaultMaxCalendarBytes
	}
	if l.MaxHappenings <= 0 {
		l.MaxHappenings = DefaultMaxHappenings
	}
	if l.MaxRecurrenceSteps <= 0 {
		l.MaxRecurrenceSteps = DefaultMaxRecurrenceSteps
	}
	if l.MaxTime <= 0 {
		l.MaxTime = DefaultMaxTime
	}
	return l
}

// CutOff says which bound cut a document short.
type CutOff struct {
	// Bound is one of the Bound constants.
	Bound string
	// Limit is the bound's value (bytes, events, steps, milliseconds).
	Limit int64
}

func (c CutOff) String() string {
	return fmt.Sprintf("cut off at %s %d", c.Bound, c.Limit)
}

// work is what one document's reading has left to spend.
type work struct {
	limits Limits
	// steps is the recurrence budget left, shared by the document's rules.
	steps    int
	deadline time.Time
	// finderBuilt: the zone finder was built before the document was
	// read; if its reading builds it, the build's seconds are not its own.
	finderBuilt bool
	cut         *CutOff
}

func newWork(l Limits, now time.Time) *work {
	l = l.withDefaults()
	return &work{limits: l, steps: l.MaxRecurrenceSteps, deadline: now.Add(l.MaxTime), finderBuilt: zoneFinderBuild.Load() != 0}
}

// cutAt records that bound cut the document (the first bound counts).
func (w *work) cutAt(bound string, limit int64) {
	if w != nil && w.cut == nil {
		w.cut = &CutOff{Bound: bound, Limit: limit}
	}
}

// late reports that the document's time is up, recording the cut-off.
func (w *work) late() bool {
	if w == nil {
		return false
	}
	if w.cut != nil && w.cut.Bound == BoundTime {
		return true
	}
	deadline := w.deadline
	if !w.finderBuilt {
		deadline = deadline.Add(time.Duration(zoneFinderBuild.Load()))
	}
	if time.Now().Before(deadline) {
		return false
	}
	w.cutAt(BoundTime, w.limits.MaxTime.Milliseconds())
	return true
}

// veventsPerEvent is how many VEVENTs are read for each event kept: a
// series' overrides are VEVENTs of their own.
const veventsPerEvent = 4

// cutCalendar keeps the VEVENTs that begin within limit bytes of an
// iCalendar file, and at most maxVEvents of them, and closes the calendar
// after them. Components before the first VEVENT (time zones) are kept as
// they are. It scans the file once and decodes nothing: the decoder then
// reads only what is kept.
func cutCalendar(body []byte, limit, maxVEvents int) (cut []byte, bound string) {
	begin := []byte("\nBEGIN:VEVENT")
	// A VEVENT runs from its BEGIN to the next one; it fits when that is
	// within limit. last is the BEGIN of the last VEVENT seen, -1 before
	// the first.
	last, n, at := -1, 0, -1
	for from := 0; ; {
		i := bytes.Index(body[from:], begin)
		if i < 0 {
			break
		}
		p := from + i
		if p > limit {
			at, bound = last, BoundCalendarBytes
			break
		}
		if n++; n > maxVEvents {
			at, bound = p, BoundHappenings
			break
		}
		last, from = p, p+1
	}
	if bound == "" && len(body) > limit {
		at, bound = last, BoundCalendarBytes
	}
	if bound == "" {
		return body, ""
	}
	if at < 0 {
		// Not even one VEVENT fits: keep the lines within the limit.
		at = max(0, bytes.LastIndexByte(body[:limit], '\n'))
	}
	out := make([]byte, 0, at+len("\r\nEND:VCALENDAR\r\n"))
	out = append(out, bytes.TrimRight(body[:at], "\r")...)
	return append(out, "\r\nEND:VCALENDAR\r\n"...), bound
}

// readers lets at most half the process's processors read documents at
// once (at least one): a crawl reads eight documents at a time and POST
// /parse one per request, and reading is CPU work that would otherwise
// take every processor from the API while large documents are read.
var readers = make(chan struct{}, max(1, runtime.GOMAXPROCS(0)/2))

// cutOffs counts documents cut off, by bound.
var cutOffs = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "feedsvc_documents_cut_off_total",
	Help: "Documents read for events that a bound cut short (what fitted was kept), by bound.",
}, []string{"bound"})

func init() {
	for _, b := range []string{BoundCalendarBytes, BoundHappenings, BoundRecurrence, BoundTime, BoundSourceHappenings} {
		cutOffs.WithLabelValues(b)
	}
}

// Metrics is the collector of the cut-off counter, for the service's
// registry.
func Metrics() prometheus.Collector { return cutOffs }

// CountCutOff counts a cut-off by the crawler's own bound
// (BoundSourceHappenings); Extract counts its own.
func CountCutOff(bound string) { cutOffs.WithLabelValues(bound).Inc() }
