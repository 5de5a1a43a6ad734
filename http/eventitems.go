package http

import (
	"slices"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/http/envelope"
	"github.com/feedsvc/feedsvc/http/eventshape"
	"github.com/feedsvc/feedsvc/readmodel"
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

// eventItemQuery is a validated event-item list query.
type eventItemQuery struct {
	filter        readmodel.EventItemFilter
	includeSource bool
}

// parseEventItemQuery applies the date rules of api.md 4.6 with D8: the
// range defaults to [now, now + 30 days); a given since or until must lie in
// [now - 7 days, now + 30 days]; a derived until (since + 30 days) is
// clamped to the window's end; since must be before until.
func parseEventItemQuery(c *fiber.Ctx, legacy bool, now time.Time) (eventItemQuery, error) {
	q := eventItemQuery{filter: readmodel.EventItemFilter{Now: now, OrderBy: readmodel.OrderByOccurrence}}
	f := &q.filter
	var err error
	if f.Limit, err = intParam(c, "limit", defaultEventItemLimit, 1, maxItemLimit); err != nil {
		return q, err
	}
	if f.Offset, err = intParam(c, "offset", 0, 0, 1<<31-1); err != nil {
		return q, err
	}
	earliest, latest := now.Add(-eventWindowPast), now.Add(eventWindowAhead)
	since, err := windowParam(c, "since", earliest, latest)
	if err != nil {
		return q, err
	}
	until, err := windowParam(c, "until", earliest, latest)
	if err != nil {
		return q, err
	}
	f.Since = now
	if since != nil {
		f.Since = *since
	}
	f.Until = f.Since.Add(defaultEventSpan)
	if f.Until.After(latest) {
		f.Until = latest
	}
	if until != nil {
		f.Until = *until
	}
	if !f.Since.Before(f.Until) {
		return q, envelope.BadRequest("until", "must be after since")
	}
	if f.Status = c.Query("status"); f.Status != "" && !slices.Contains(domain.EventStatuses, f.Status) {
		return q, envelope.BadRequest("status", "must be one of scheduled, cancelled, postponed, rescheduled, completed")
	}
	switch order := c.Query("orderBy"); order {
	case "", readmodel.OrderByOccurrence:
	case readmodel.OrderByCreated:
		f.OrderBy = order
	default:
		return q, envelope.BadRequest("orderBy", "must be occurrence or created")
	}
	q.includeSource, err = includeParam(c, legacy)
	return q, err
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
	now := domain.Now()
	q, err := parseEventItemQuery(c, legacy, now)
	if err != nil {
		return err
	}
	page, err := h.Queries.EventItems(c.UserContext(), organization(c), feedID, q.filter)
	if err != nil {
		return err
	}
	window := eventshape.Window{From: &q.filter.Since, To: &q.filter.Until}
	var items any
	if legacy {
		out := make([]eventshape.LegacyItem, 0, len(page.Items))
		for _, it := range page.Items {
			out = append(out, eventshape.Legacy(h.eventItem(it, eventshape.InWindow(it.Details, window, q.filter.Status, now), nil)))
		}
		items = out
	} else {
		out := make([]eventshape.Data, 0, len(page.Items))
		for _, it := range page.Items {
			item := h.eventItem(it, eventshape.InWindow(it.Details, window, q.filter.Status, now), &page.Config)
			out = append(out, eventshape.Current(item, q.includeSource))
		}
		items = out
	}
	return envelope.OK(c, fiber.StatusOK, itemList{Items: items, Total: page.Total, Pagination: pagination{
		Limit: q.filter.Limit, Offset: q.filter.Offset, HasMore: q.filter.Offset+len(page.Items) < page.Total,
	}})
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
	it, config, err := h.Queries.EventItem(c.UserContext(), organization(c), feedID, itemID)
	if err != nil {
		return err
	}
	item := h.eventItem(it, eventshape.Everything(it.Details, domain.Now()), &config)
	return envelope.OK(c, fiber.StatusOK, eventshape.Current(item, include))
}

func (h *handlers) giveEventFeedback(c *fiber.Ctx) error {
	return h.giveFeedback(c, domain.FeedEvents, "id")
}

// eventItem is what the shapes render an item from; it is scored when the
// feed's config is given (the current shape).
func (h *handlers) eventItem(it readmodel.EventItem, block eventshape.Occurrences, config *domain.FeedConfig) eventshape.Item {
	out := eventshape.Item{
		ID: it.ID, EventID: it.EventID, AddedAt: it.AddedAt, SourceType: it.SourceType, Details: it.Details,
		Occurrences: block,
	}
	if config != nil {
		out.Relevance = h.EventRelevance.Score(it.Details, *config)
	}
	return out
}
