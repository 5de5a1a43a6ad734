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
