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
	// OnlyIfNew records the finding only when the event is not known yet;
	// otherwise the event is returned as it stands (the finding's document
	// does not have the word on it: see ingest/holders.go).
	OnlyIfNew bool
}

// EventFound is the event as stored after a finding, and what the finding
// did to it.
type EventFound struct {
	domain.EventDiscovered
	New     bool
	Changed bool
}

// DiscoverEvent stores a new event, records a change of a known one, or
// does nothing when the finding says what is already stored.
func (h *Handler) DiscoverEvent(ctx context.Context, c DiscoverEvent) (EventFound, Result, error) {
	details, err := domain.NewEventDetails(c.Details)
	if err != nil {
		return EventFound{}, Result{}, err
	}
	var decided []domain.Event
	ev, res, err := decide(ctx, h, change[*domain.CalendarEvent]{
		stream: domain.CalendarEventStream(domain.EventID(details.Identity)),
		empty:  func() *domain.CalendarEvent { return &domain.CalendarEvent{} },
		decide: func(e *domain.CalendarEvent) ([]domain.Event, error) {
			if c.OnlyIfNew && e.Exists() {
				return nil, nil
			}
			decided = e.Discover(c.SourceID, details, h.now())
			return decided, nil
		},
	})
	if err != nil {
		return EventFound{}, Result{}, fmt.Errorf("discover event %q: %w", details.Identity, err)
	}
	found := EventFound{EventDiscovered: ev.Found()}
	for _, e := range decided {
		switch e.(type) {
		case domain.EventDiscovered:
			found.New = true
		case domain.EventChanged:
			found.Changed = true
		}
	}
	return found, res, nil
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
