package calendar

import (
	"cmp"
	"slices"
	"time"

	"github.com/feedsvc/feedsvc/domain"
)

// draft is one event as a format found it: text still as found, times in
// the event's zone, before its identity is settled and its recurrences
// expanded. Every format (JSON-LD, Microdata, iCalendar) produces drafts,
// so identity, expansion, display and geography are one mechanism.
type draft struct {
	// url is the event's own page, absolute, when it names one.
	url string
	// uid is the iCalendar UID.
	uid string
	// title and description as found, as HTML (plain text is escaped by
	// the format that found it, see textToHTML).
	title, description string
	published          *time.Time
	modified           *time.Time
	loc                *time.Location
	when               schedule
	location           *domain.Location
	capacity           *domain.Capacity
	organizer          *domain.Organizer
	images             []string
	urls               []string
	// source is the event's source block when the document is not a web
	// page (a platform post); nil means the document's site block.
	source *domain.SourceBlock
	// identity is settled by identify.
	identity string
}

// details is the draft as the domain stores it, found in the document at
// docURL; pageURL is the primary URL of an event that names none.
func (dr draft) details(docURL, pageURL string, opts Options) domain.HappeningDetails {
	w := newWindow(opts)
	instances, horizon := dr.when.expand(w, dr.loc)
	localityScore := completeFromCoordinates(dr.location)
	approximate(dr.location)
	d := domain.HappeningDetails{
		Identity:     dr.identity,
		Title:        sanitizeTitle(dr.title),
		Description:  sanitizeDescription(dr.description),
		PublishedAt:  utcPtr(dr.published),
		ModifiedAt:   utcPtr(dr.modified),
		Time:         domain.HappeningTime{TemporalPattern: dr.pattern(instances), Timezone: dr.loc.String(), DisplayText: displayText(dr.when, instances, dr.loc)},
		Instances:    make([]domain.HappeningInstance, 0, len(instances)),
		Horizon:      utcPtr(horizon),
		ExpandedFrom: expandedFrom(horizon, w),
		Location:     dr.location,
		Capacity:     dr.capacity,
		Organizer:    dr.organizer,
		PrimaryURL:   cmp.Or(dr.url, pageURL),
		GeoLocations: geoLocations(dr.location, localityScore),
		Source:       domain.SiteBlock(docURL),
	}
	if dr.source != nil {
		d.Source = *dr.source
	}
	d.ShortDescription = shortDescription(d.Description)
	d.URLs = dedupe(append([]string{d.PrimaryURL}, dr.urls...))
	if len(dr.images) > 0 {
		d.PrimaryImage = dr.images[0]
		d.SupportingImages = dedupe(slices.DeleteFunc(slices.Clone(dr.images[1:]), func(s string) bool { return s == d.PrimaryImage }))
	}
	for _, in := range instances {
		d.Instances = append(d.Instances, domain.HappeningInstance{
			Key:           in.key,
			Status:        cmp.Or(in.status, domain.StatusScheduled),
			PreviousStart: utcPtr(in.previous),
			Occurrences:   occurrences(in.span, dr.loc, w),
		})
	}
	return d
}

// pattern: recurring when the event has a rule or several dates; ongoing
// when its only span lasts more than ongoingDays local days; else
// singular.
func (dr draft) pattern(instances []instance) string {
	switch {
	case dr.when.set != nil || len(dr.when.dates) > 0:
		return domain.PatternRecurring
	case len(instances) == 1 && spanDays(instances[0].span, dr.loc) > ongoingDays:
		return domain.PatternOngoing
	default:
		return domain.PatternSingular
	}
}

func utcPtr(t *time.Time) *time.Time {
	if t == nil || t.IsZero() {
		return nil
	}
	u := t.UTC()
	return &u
}

func dedupe(list []string) []string {
	out := make([]string, 0, len(list))
	for _, s := range list {
		if s != "" && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// expandedFrom is where a recurring expansion began: the window's start,
// for the events that have a horizon.
func expandedFrom(horizon *time.Time, w window) *time.Time {
	if horizon == nil {
		return nil
	}
	from := w.from
	return &from
}
