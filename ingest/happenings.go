package ingest

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/ingest/calendar"
	"github.com/feedsvc/feedsvc/ingest/connector"
	"github.com/feedsvc/feedsvc/ingest/crawlstate"
	"github.com/feedsvc/feedsvc/ingest/document"
)

// Events are facts of a source like articles: every document a crawl
// fetches is read for the events it holds (a page's JSON-LD or Microdata,
// a calendar file), each event is recorded once for every feed, whichever
// feeds the source has, and then offered to each attachment whose feed
// kind takes events (HappeningIntake) and that accepts it. Documents that held
// events are re-read on every regular poll, because events change in place
// (a new date, a cancellation) where articles do not; the recorder turns a
// change into an EventChanged that every feed's item reflects.

// HappeningRecorder reads documents for events and records them.
type HappeningRecorder interface {
	// ReadHappenings extracts the events a document holds and the calendars
	// (.ics, webcal:) it links to.
	ReadHappenings(doc document.Document) (DocumentHappenings, error)
	// RecordHappening records one finding: new, changed, or as it was. A
	// deferred finding comes from a document that does not have the word
	// on the event (see holders.go): it is recorded only when the event is
	// new, and otherwise just reports the event as it stands.
	RecordHappening(ctx context.Context, sourceID uuid.UUID, e StatedHappening, deferred bool) (RecordedHappening, error)
	// HappeningDetails reads a recorded event's details as they stand
	// now, and whether it was recorded.
	HappeningDetails(ctx context.Context, id uuid.UUID) (domain.HappeningDetails, bool, error)
}

// DocumentHappenings is what one document holds.
type DocumentHappenings struct {
	Happenings []StatedHappening
	Calendars  []string
	// CutOff says which bound cut the document short (Events are what
	// fitted); empty when it was read whole.
	CutOff string
}

// StatedHappening is one event as a document states it.
type StatedHappening struct {
	ID      uuid.UUID
	Details domain.HappeningDetails
	// Precedence ranks the document as the word on this event: higher
	// wins when documents disagree.
	Precedence int
}

// RecordedHappening is a recorded event with what acceptance judges it by.
type RecordedHappening struct {
	ID uuid.UUID `bun:"id"`
	// ChangedAt is when it was published or last changed, as the source
	// says or, when it says nothing, when the service found the change.
	ChangedAt time.Time `bun:"changed_at"`
	// LastEnd is when its last known occurrence ends.
	LastEnd time.Time `bun:"last_end"`
	// Details are its details as they stand after the recording; nil when
	// not read (a backfill's known events), read then only for a feed
	// with rules (offerHappening).
	Details *domain.HappeningDetails `bun:"-"`
}

// acceptsHappening is domain.AcceptsHappening for the attachment a.
func acceptsHappening(a Attachment, e RecordedHappening, now time.Time) bool {
	return domain.AcceptsHappening(a.Enabled(), a.AcceptingSince(), e.ChangedAt, e.LastEnd, now)
}

// maxCalendarsPerCrawl bounds the calendar files one crawl follows from
// the pages it read.
const maxCalendarsPerCrawl = 20

// happeningsAtOnce is how many of a document's happenings are recorded, marked
// found and offered together: a document whose recording runs out of time
// keeps what it recorded, and the next poll goes on from there.
const happeningsAtOnce = 100

// ingestHappenings records the happenings of a fetched document and distributes
// them; it returns how many items it added, how many events the document
// holds, whether it recorded them all (no bound cut the document short:
// only then may a re-read that finds it unchanged skip it) and the
// calendars it links to. A document the event reader cannot
// read holds no event; the other readers judge it. The crawl records at
// most Config.MaxHappeningsPerCrawl events of a source; a document cut short
// (by its own bounds or that one) is noted in stats and its kept events
// are recorded, new ones first, a chunk at a time.
func (w *Worker) ingestHappenings(ctx context.Context, sourceID uuid.UUID, doc document.Document, stats *crawlStats) (added, holds int, whole bool, calendars []string, err error) {
	read, err := w.happenings.ReadHappenings(doc)
	if err != nil {
		w.log.Debug("document read for no events", "source_id", sourceID, "url", doc.URL, "err", err)
		return 0, 0, true, nil, nil
	}
	whole = read.CutOff == ""
	if !whole {
		stats.cutOff(doc.URL, read.CutOff)
	}
	if len(read.Happenings) == 0 {
		// What the document held before is let go by MarkDistributed, in
		// the statement that completes the URL.
		return 0, 0, whole, read.Calendars, nil
	}
	holds = len(read.Happenings)
	kept := read.Happenings[:stats.takeHappenings(len(read.Happenings), w.cfg.MaxHappeningsPerCrawl)]
	if len(kept) < len(read.Happenings) {
		whole = false
		stats.cutOff(doc.URL, fmt.Sprintf("cut off at %s %d", calendar.BoundSourceHappenings, w.cfg.MaxHappeningsPerCrawl))
		calendar.CountCutOff(calendar.BoundSourceHappenings)
	}
	if len(kept) == 0 {
		// Events a cut took away are still the document's: only those it
		// no longer holds are let go.
		return 0, holds, whole, read.Calendars, w.releaseHappenings(ctx, doc.URL, read.Happenings)
	}
	// The document is known to hold events before any is recorded, so
	// that one whose recording runs out of time is read again at the next
	// poll (happeningRechecks) even when no page links to it then.
	if err := w.store.MarkHappeningDocument(ctx, sourceID, doc.URL); err != nil {
		return 0, holds, whole, read.Calendars, err
	}
	held, err := w.claimHappenings(ctx, doc.URL, kept)
	if err != nil {
		return 0, holds, whole, read.Calendars, err
	}
	if kept, err = w.newFirst(ctx, sourceID, kept); err != nil {
		return 0, holds, whole, read.Calendars, err
	}
	// The attachments are read once per document, after its first events
	// were marked found (the ordering distribute relies on), not once per
	// event: a calendar may hold hundreds.
	var atts []Attachment
	for chunk := range slices.Chunk(kept, happeningsAtOnce) {
		found, err := w.recordHappenings(ctx, sourceID, doc.URL, chunk, held)
		if err != nil {
			return added, holds, whole, read.Calendars, err
		}
		if err := w.markHappeningsFound(ctx, sourceID, found); err != nil {
			return added, holds, whole, read.Calendars, err
		}
		if atts == nil {
			if atts, err = w.attachments.OfSource(ctx, sourceID); err != nil {
				return added, holds, whole, read.Calendars, err
			}
		}
		for _, e := range found {
			n, err := w.offerHappening(ctx, atts, e)
			added += n
			if err != nil {
				return added, holds, whole, read.Calendars, err
			}
		}
	}
	return added, holds, whole, read.Calendars, w.releaseHappenings(ctx, doc.URL, read.Happenings)
}

// newFirst orders events the source has not found yet before those it
// has (each in document order): a document too big to record within one
// poll's store deadline then gets further at every poll instead of
// recording its first events again and again.
func (w *Worker) newFirst(ctx context.Context, sourceID uuid.UUID, stated []StatedHappening) ([]StatedHappening, error) {
	ids := make([]uuid.UUID, len(stated))
	for i, e := range stated {
		ids[i] = e.ID
	}
	isKnown, err := w.store.KnownHappenings(ctx, sourceID, ids)
	if err != nil {
		return nil, err
	}
	if len(isKnown) == 0 {
		return stated, nil
	}
	out := make([]StatedHappening, 0, len(stated))
	for _, e := range stated {
		if !isKnown[e.ID] {
			out = append(out, e)
		}
	}
	for _, e := range stated {
		if isKnown[e.ID] {
			out = append(out, e)
		}
	}
	return out, nil
}

// recordHappenings records what a document says of the happenings it holds where
// it has the word on them (held, from claimHappenings; holders.go).
func (w *Worker) recordHappenings(ctx context.Context, sourceID uuid.UUID, url string, happenings []StatedHappening, held map[uuid.UUID]bool) ([]RecordedHappening, error) {
	found := make([]RecordedHappening, 0, len(happenings))
	for _, e := range happenings {
		f, err := w.happenings.RecordHappening(ctx, sourceID, e, !held[e.ID])
		if err != nil {
			return found, fmt.Errorf("record event %s of %s: %w", e.ID, url, err)
		}
		found = append(found, f)
	}
	return found, nil
}

// markHappeningsFound records the source's events before they are
// distributed: a backfill that starts later finds them here (see
// backfill.go for the ordering argument).
func (w *Worker) markHappeningsFound(ctx context.Context, sourceID uuid.UUID, events []RecordedHappening) error {
	found := make([]crawlstate.FoundHappening, len(events))
	for i, e := range events {
		found[i] = crawlstate.FoundHappening{ID: e.ID, ChangedAt: e.ChangedAt, LastEnd: e.LastEnd}
	}
	return w.store.MarkHappeningsFound(ctx, sourceID, found)
}

// offerHappening adds a happening to every feed among atts whose kind takes
// events, that accepts it and whose keyword rules admit it
// (domain.FeedRules.AdmitsHappening, on its details as they stand when it
// is offered); the backfill offers a source's known events the same way.
func (w *Worker) offerHappening(ctx context.Context, atts []Attachment, e RecordedHappening) (int, error) {
	added := 0
	for _, a := range atts {
		if _, ok := w.intakes.For(a.FeedKind); !ok {
			return added, fmt.Errorf("add event %s to feed %s: no intake for %s feeds", e.ID, a.FeedID, a.FeedKind)
		}
		in, ok := w.intakes.happenings(a.FeedKind)
		if !ok || !acceptsHappening(a, e, w.now()) {
			continue
		}
		if a.HasRules() {
			if e.Details == nil {
				d, found, err := w.happenings.HappeningDetails(ctx, e.ID)
				if err != nil {
					return added, fmt.Errorf("read event %s for the rules of feed %s: %w", e.ID, a.FeedID, err)
				}
				if !found {
					continue
				}
				e.Details = &d
			}
			if !a.FeedRules.AdmitsHappening(*e.Details) {
				continue
			}
		}
		ok, err := in.AddHappening(ctx, a, e.ID)
		if err != nil {
			return added, fmt.Errorf("add event %s to feed %s: %w", e.ID, a.FeedID, err)
		}
		if ok {
			added++
		}
	}
	return added, nil
}

// happeningRechecks are the source's known happening documents not already in
// todo, up to room of them, least recently checked first. A document the
// discovery listed again is re-read as listed (with what the listing gave
// about it); after an exhaustive discovery only those are. Each comes with
// what it answered when last read whole, which ingestCandidate uses to
// skip one found unchanged; offered is the crawl's crawlStats.Offered.
func (w *Worker) happeningRechecks(ctx context.Context, sourceID uuid.UUID, todo, listed []connector.Candidate, exhaustive bool, room int, offered time.Time) ([]connector.Candidate, map[string]crawlstate.EventDocument, error) {
	if room <= 0 || exhaustive && len(listed) == 0 {
		return nil, nil, nil
	}
	var only []string
	if exhaustive {
		only = candidateURLs(listed)
	}
	docs, err := w.store.HappeningDocuments(ctx, sourceID, candidateURLs(todo), only, room, w.cfg.RereadWholeEvery, offered)
	if err != nil {
		return nil, nil, err
	}
	byURL := make(map[string]connector.Candidate, len(listed))
	for _, c := range listed {
		byURL[c.URL] = c
	}
	out := make([]connector.Candidate, len(docs))
	known := make(map[string]crawlstate.EventDocument, len(docs))
	for i, d := range docs {
		out[i] = connector.Candidate{URL: d.URL}
		if c, ok := byURL[d.URL]; ok {
			out[i] = c
		}
		known[d.URL] = d
	}
	return out, known, nil
}

// DefaultRereadWholeEvery is Config.RereadWholeEvery's default: an hour,
// six polls at the default interval.
const DefaultRereadWholeEvery = time.Hour

// backfillHappenings adds to a new attachment every happening its source has
// found that the attachment accepts.
func (w *Worker) backfillHappenings(ctx context.Context, a Attachment) (found, added int, err error) {
	known, err := w.store.HappeningsOfSource(ctx, a.SourceID)
	if err != nil {
		return 0, 0, err
	}
	happenings := make([]RecordedHappening, len(known))
	for i, e := range known {
		happenings[i] = RecordedHappening{ID: e.ID, ChangedAt: e.ChangedAt, LastEnd: e.LastEnd}
	}
	for _, e := range happenings {
		n, err := w.offerHappening(ctx, []Attachment{a}, e)
		added += n
		if err != nil {
			return len(happenings), added, err
		}
	}
	return len(happenings), added, nil
}

// followCalendars reads the calendar files the crawl's pages linked to and
// that the crawl did not already read, up to maxCalendarsPerCrawl. A
// calendar that fails is left for the next poll, whose pages link to it
// again; one that held events is re-read on every poll from then on.
func (w *Worker) followCalendars(ctx context.Context, conn connector.Connector, sourceID uuid.UUID, done []connector.Candidate, stats *crawlStats) {
	read := map[string]bool{}
	for _, c := range done {
		read[c.URL] = true
	}
	followed := 0
	for _, u := range stats.Calendars {
		if read[u] || followed == maxCalendarsPerCrawl || ctx.Err() != nil {
			continue
		}
		read[u] = true
		followed++
		kind, err := w.processCandidate(ctx, conn, sourceID, connector.Candidate{URL: u}, calendarFile, nil, stats)
		if err != nil {
			w.log.Info("calendar failed; will retry next poll", "source_id", sourceID, "url", u, "kind", kind.String(), "err", err)
		}
	}
}
