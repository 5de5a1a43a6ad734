package calendar

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/ingest/document"
	"github.com/feedsvc/feedsvc/ingest/platform"
)

// DefaultHorizon is how far ahead recurrences are expanded when Options
// gives no horizon.
const DefaultHorizon = 180 * 24 * time.Hour

// ErrUnsupported is returned for a document that is neither an HTML page
// nor an iCalendar file.
var ErrUnsupported = errors.New("document is neither HTML nor iCalendar")

// Options steer one extraction.
type Options struct {
	// Now is the crawl's clock: recurrences are expanded from the start of
	// the month a week before it (see doc.go) to Now + Horizon.
	Now time.Time
	// Horizon is how far ahead recurrences are expanded; DefaultHorizon
	// when zero.
	Horizon time.Duration
	// Limits bound the work of the document (limits.go).
	Limits Limits
	// work is the document's budget, set by Extract.
	work *work
}

// Result is what one document holds.
type Result struct {
	// Happenings passed domain.NewHappeningDetails.
	Happenings []domain.HappeningDetails
	// Dropped counts events found but invalid (no title, no date, ...).
	Dropped int
	// Calendars are the iCalendar files an HTML page links to (.ics files,
	// webcal: links rewritten to https), absolute, for the crawler to
	// fetch next.
	Calendars []string
	// CutOff is the bound that cut the document short, nil when it was
	// read whole; Happenings are then what fitted.
	CutOff *CutOff
}

// Extract finds the events of a document: an iCalendar file's VEVENTs, an
// HTML page's schema.org events (JSON-LD, else Microdata) and the
// calendars it links to, or a platform post's event (post.go). A malformed part (one JSON-LD block, one event)
// is skipped, never the rest. A document over one of opts.Limits is cut
// off (Result.CutOff), never refused.
func Extract(d document.Document, opts Options) (Result, error) {
	base, err := url.Parse(d.URL)
	if err != nil || !base.IsAbs() {
		return Result{}, fmt.Errorf("extract events: invalid document URL %q", d.URL)
	}
	opts = opts.withDefaults()
	readers <- struct{}{}
	defer func() { <-readers }()
	// The budget starts once the document may be read: waiting for
	// another document's turn is not this one's time.
	work := newWork(opts.Limits, time.Now())
	opts.work = work
	var drafts []draft
	var calendars []string
	var dropped int
	// A page is the event's page, and its URL the event's primary URL
	// when the event names none; a calendar file is not.
	pageURL := ""
	switch {
	case platform.IsPost(d):
		drafts, dropped, err = fromPost(d)
	case isCalendar(d):
		drafts, dropped, err = fromICalendar(d, work)
	case d.IsHTML():
		drafts, dropped, calendars, err = fromHTML(d, base, newWindow(opts).from)
		pageURL = d.URL
	default:
		return Result{}, fmt.Errorf("extract events %s: %w (%s)", d.URL, ErrUnsupported, d.ContentType)
	}
	if err != nil {
		return Result{}, fmt.Errorf("extract events %s: %w", d.URL, err)
	}
	res := Result{Calendars: calendars, Dropped: dropped}
	for _, dr := range identify(drafts, d.URL) {
		if len(res.Happenings) == work.limits.MaxHappenings {
			work.cutAt(BoundHappenings, int64(work.limits.MaxHappenings))
			break
		}
		if work.late() {
			break
		}
		details, err := domain.NewHappeningDetails(dr.details(d.URL, pageURL, opts))
		if err != nil {
			res.Dropped++
			continue
		}
		res.Happenings = append(res.Happenings, details)
	}
	if res.CutOff = work.cut; res.CutOff != nil {
		cutOffs.WithLabelValues(res.CutOff.Bound).Inc()
	}
	return res, nil
}

func (o Options) withDefaults() Options {
	if o.Now.IsZero() {
		o.Now = time.Now()
	}
	if o.Horizon <= 0 {
		o.Horizon = DefaultHorizon
	}
	return o
}

// isCalendar: by media type, or by the first line when a server sends
// calendars as text/plain or application/octet-stream.
func isCalendar(d document.Document) bool {
	switch d.MediaType() {
	case "text/calendar", "application/ics", "text/x-vcalendar":
		return true
	case "text/html", "application/xhtml+xml":
		return false
	}
	head := d.Body[:min(len(d.Body), 64)]
	return strings.HasPrefix(strings.ToUpper(strings.TrimLeft(string(head), "\ufeff \r\n\t")), "BEGIN:VCALENDAR")
}
