package commands

import (
	"context"
	"fmt"

	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/domain"
)

// DiscoverEvent records an event found through a source record.
type DiscoverEvent struct {
	SourceID uuid.UUID
	Details  domain.EventDetails
}

// DiscoveredEvent is the event as stored, and what the finding changed:
// New when it was unknown, Changed when it differed from what was stored.
type DiscoveredEvent struct {
	EventID uuid.UUID
	New     bool
	Changed bool
}

// DiscoverEvent stores a new event, or its new state when the finding
// differs from the stored one; nothing when it does not.
func (h *Handler) DiscoverEvent(ctx context.Context, c DiscoverEvent) (DiscoveredEvent, Result, error) {
	d, err := domain.NewEventDetails(c.Details)
	if err != nil {
		return DiscoveredEvent{}, Result{}, err
	}
	id := domain.EventID(d.Identity)
	var out DiscoveredEvent
	_, res, err := decide(ctx, h, change[*domain.CalendarEvent]{
		stream: domain.CalendarEventStream(id),
		empty:  func() *domain.CalendarEvent { return &domain.CalendarEvent{} },
		decide: func(e *domain.CalendarEvent) ([]domain.Event, error) {
			events := e.Discover(c.SourceID, d, h.now())
			out = DiscoveredEvent{EventID: id}
			for _, ev := range events {
				switch ev.(type) {
				case domain.EventDiscovered:
					out.New = true
				case domain.EventChanged:
					out.Changed = true
				}
			}
			return events, nil
		},
	})
	if err != nil {
		return DiscoveredEvent{}, Result{}, fmt.Errorf("discover event %s: %w", id, err)
	}
	return out, res, nil
}

// AddEventItem puts an event into an event feed through one of its
// attachments.
type AddEventItem struct {
	domain.ItemTarget
	EventID uuid.UUID
}

// AddEventItem appends the item when the feed does not have the event yet
// (added is true: this is what event.item_added announces), or links it to
// the attachment when another one brought it; nothing when the attachment
// already did.
func (h *Handler) AddEventItem(ctx context.Context, c AddEventItem) (added bool, res Result, err error) {
	_, res, err = decide(ctx, h, change[*domain.EventItem]{
		stream: domain.EventItemStream(c.FeedID, c.EventID), org: c.OrganizationID,
		empty: func() *domain.EventItem { return &domain.EventItem{} },
		decide: func(i *domain.EventItem) ([]domain.Event, error) {
			events := i.Add(c.ItemTarget, c.EventID, h.now())
			for _, e := range events {
				if _, ok := e.(domain.EventItemAdded); ok {
					added = true
				}
			}
			return events, nil
		},
	})
	if err != nil {
		return false, Result{}, fmt.Errorf("add event %s to feed %s: %w", c.EventID, c.FeedID, err)
	}
	return added, res, nil
}
