package http

import (
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/http/envelope"
	"github.com/feedsvc/feedsvc/readmodel/happeningitems"
	"github.com/feedsvc/feedsvc/readmodel/shape"
)

// Event item list rules (api.md 4.6, 8 and D8).
const (
	defaultEventItemLimit = 20
	// The window a caller's dates must lie in, around the time of the
	// request, and the span of a range without until.
	eventWindowPast  = 7 * 24 * time.Hour
	eventWindowAhead = 30 * 24 * time.Hour
	defaultEventSpan = 30 * 24 * time.Hour
)

// parseEventItemQuery applies the date rules of api.md 4.6 with D8: the
// range defaults to [now, now + 30 days); a given since or until must lie in
// [now - 7 days, now + 30 days]; a derived until (since + 30 days) is
// clamped to the window's end; since must be before until.
//
// With a cursor the list pages through the feed's changes: no offset or
// orderBy, and no range but the bounds given (each is checked as above).
func parseEventItemQuery(c *fiber.Ctx, feedID uuid.UUID, legacy bool, now time.Time) (happeningitems.Filter, error) {
	f := happeningitems.Filter{Now: now, OrderBy: happeningitems.OrderByOccurrence}
	var err error
	if f.Limit, f.Offset, err = pageParams(c, defaultEventItemLimit); err != nil {
		return f, err
	}
	if f.After, err = cursorParam(c, feedID); err != nil {
		return f, err
	}
	if f.After != nil {
		if err := withoutOffset(c, "offset", "orderBy"); err != nil {
			return f, err
		}
	}
	if err := dateRange(c, &f, now); err != nil {
		return f, err
	}
	// A parameter given empty (?status=) is not absent: the document
	// lists its values and the empty one is not among them.
	args := c.Context().QueryArgs()
	if f.Status = c.Query("status"); args.Has("status") && !slices.Contains(domain.HappeningStatuses, f.Status) {
		return f, envelope.BadRequest("status", "must be one of scheduled, cancelled, postponed, rescheduled, completed")
	}
	if f.Query, err = searchParam(c); err != nil {
		return f, err
	}
	switch order := c.Query("orderBy"); {
	case !args.Has("orderBy"), order == happeningitems.OrderByOccurrence:
	case order == happeningitems.OrderByCreated:
		f.OrderBy = order
	case order == happeningitems.OrderByRelevance:
		if err := relevanceNeeds(c, f.Query, f.After != nil); err != nil {
			return f, err
		}
		f.OrderBy = order
	default:
		return f, envelope.BadRequest("orderBy", "must be occurrence, created or relevance")
	}
	f.Shape.Legacy = legacy
	f.Shape.IncludeSource, err = includeParam(c, legacy)
	return f, err
}

// dateRange reads since and until into f: the range by the date rules, or
// on a page of changes the bounds given.
func dateRange(c *fiber.Ctx, f *happeningitems.Filter, now time.Time) error {
	earliest, latest := now.Add(-eventWindowPast), now.Add(eventWindowAhead)
	since, err := windowParam(c, "since", earliest, latest)
	if err != nil {
		return err
	}
	until, err := windowParam(c, "until", earliest, latest)
	if err != nil {
		return err
	}
	if f.After == nil {
		return defaultRange(f, now, since, until)
	}
	if since != nil && until != nil && !since.Before(*until) {
		return envelope.BadRequest("until", "must be after since")
	}
	f.Since, f.Until = deref(since), deref(until)
	return nil
}

// defaultRange sets the list's range: from since (default now) to until
// (default since + 30 days, clamped to the window's end).
func defaultRange(f *happeningitems.Filter, now time.Time, since, until *time.Time) error {
	f.Since = now
	if since != nil {
		f.Since = *since
	}
	f.Until = f.Since.Add(defaultEventSpan)
	if latest := now.Add(eventWindowAhead); f.Until.After(latest) {
		f.Until = latest
	}
	if until != nil {
		f.Until = *until
	}
	if !f.Since.Before(f.Until) {
		return envelope.BadRequest("until", "must be after since")
	}
	return nil
}

// deref is the time t points to; the zero time (an open bound) for nil.
func deref(t *time.Time) time.Time {
	if t == nil {
		return time.Time{}
	}
	return *t
}

// windowParam reads a date that must lie in [earliest, latest], at the
// microsecond precision the read model compares at.
func windowParam(c *fiber.Ctx, name string, earliest, latest time.Time) (*time.Time, error) {
	t, err := timeParam(c, name)
	if err != nil || t == nil {
		return nil, err
	}
	if t.Before(earliest) || t.After(latest) {
		return nil, envelope.BadRequest(name, "must be within 7 days before and 30 days after the current time")
	}
	*t = t.Truncate(time.Microsecond)
	return t, nil
}

func (h *handlers) listEventItems(c *fiber.Ctx) error { return h.eventItems(c, false) }

func (h *handlers) listEventItemsV0(c *fiber.Ctx) error { return h.eventItems(c, true) }

func (h *handlers) eventItems(c *fiber.Ctx, legacy bool) error {
	feedID, err := pathUUID(c, "id")
	if err != nil {
		return err
	}
	f, err := parseEventItemQuery(c, feedID, legacy, domain.Now())
	if err != nil {
		return err
	}
	page, err := h.Reads.Happenings.Items(c.UserContext(), organization(c), feedID, f)
	if err != nil {
		return err
	}
	buf := renderBuffers.Get().(*[]byte)
	defer renderBuffers.Put(buf)
	*buf, err = eventList((*buf)[:0], feedID, page, f)
	if err != nil {
		return err
	}
	return envelope.OKJSON(c, fiber.StatusOK, *buf)
}

// renderBuffers hold rendered pages until they are copied into responses:
// a page of 20 items is some 40 KB, which would otherwise be allocated (and
// collected) for every request.
var renderBuffers = sync.Pool{New: func() any { return new([]byte) }}

// eventList appends a page as data of the list (api.md 4.6): the items,
// each with its block for the query's range, total and pagination; a page
// of changes adds the items removed.
func eventList(b []byte, feedID uuid.UUID, page happeningitems.Page, f happeningitems.Filter) ([]byte, error) {
	b = append(b, `{"items":[`...)
	for i, it := range page.Items {
		if i > 0 {
			b = append(b, ',')
		}
		item := eventItem(it, occurrenceBlock(it, f))
		if f.Shape.Legacy {
			b = shape.AppendLegacy(b, item, true)
		} else {
			b = shape.AppendCurrent(b, item)
		}
	}
	// The rest as every item list has it; the items stay as written,
	// rather than be re-validated by an encoder.
	rest, err := json.Marshal(struct {
		Removed    *[]string  `json:"removedItemIds,omitempty"`
		Total      int        `json:"total"`
		Pagination pagination `json:"pagination"`
	}{removedOf(f.After, page.Removed), page.Total,
		itemPageOf(feedID, f.Limit, f.Offset, len(page.Items), page.Total, f.After, page.Changes)})
	if err != nil {
		return nil, fmt.Errorf("render item list: %w", err)
	}
	b = append(b, "],"...)
	return append(b, rest[1:]...), nil
}

// occurrenceBlock is an item's block for the list's query: its range and
// status; on a page of changes with neither, every occurrence, as the
// single item shows them.
func occurrenceBlock(it happeningitems.Item, f happeningitems.Filter) shape.Occurrences {
	w := f.Window()
	if f.After != nil && w.From == nil && w.To == nil && f.Status == "" {
		return shape.Everything(it.Occurrences, f.Now)
	}
	return shape.InWindow(it.Occurrences, w, f.Status, f.Now)
}

// getEventItem answers one item with every instance and occurrence of its
// event: no range applies.
func (h *handlers) getEventItem(c *fiber.Ctx) error {
	feedID, itemID, err := pathUUIDs(c, "id", "itemId")
	if err != nil {
		return err
	}
	include, err := parseInclude(c)
	if err != nil {
		return err
	}
	it, err := h.Reads.Happenings.Item(c.UserContext(), organization(c), feedID, itemID, happeningitems.Shape{IncludeSource: include})
	if err != nil {
		return err
	}
	item := eventItem(it, shape.Everything(it.Occurrences, domain.Now()))
	return envelope.OKJSON(c, fiber.StatusOK, shape.AppendCurrent(nil, item))
}

func (h *handlers) giveEventFeedback(c *fiber.Ctx) error {
	return h.giveFeedback(c, domain.FeedHappenings, "id")
}

// eventItem is what the shapes render an item from; its relevance score
// is the one the projector stored (the legacy shape omits it).
func eventItem(it happeningitems.Item, block shape.Occurrences) shape.Item {
	return shape.Item{
		ID: it.ID, HappeningID: it.HappeningID, AddedAt: it.AddedAt, SourceType: it.SourceType,
		Static: it.Static, Source: it.Source, Occurrences: block, Relevance: it.Relevance,
	}
}
