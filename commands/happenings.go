package commands

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/domain"
)

// DiscoverHappening records a happening found through a source record.
type DiscoverHappening struct {
	SourceID uuid.UUID
	Details  domain.HappeningDetails
	// OnlyIfNew records the finding only when the happening is not known yet;
	// otherwise the happening is returned as it stands (the finding's document
	// does not have the word on it: see ingest/holders.go).
	OnlyIfNew bool
}

// HappeningFound is the happening as stored after a finding, and what the finding
// did to it.
type HappeningFound struct {
	domain.HappeningDiscovered
	New     bool
	Changed bool
}

// DiscoverHappening stores a new happening, records a change of a known one, or
// does nothing when the finding says what is already stored.
func (h *Handler) DiscoverHappening(ctx context.Context, c DiscoverHappening) (HappeningFound, Result, error) {
	details, err := domain.NewHappeningDetails(c.Details)
	if err != nil {
		return HappeningFound{}, Result{}, err
	}
	var decided []domain.Event
	ev, res, err := decide(ctx, h, change[*domain.Happening]{
		stream: domain.HappeningStream(domain.HappeningID(details.Identity)),
		empty:  func() *domain.Happening { return &domain.Happening{} },
		decide: func(e *domain.Happening) ([]domain.Event, error) {
			if c.OnlyIfNew && e.Exists() {
				return nil, nil
			}
			decided = e.Discover(c.SourceID, details, h.now())
			return decided, nil
		},
	})
	if err != nil {
		return HappeningFound{}, Result{}, fmt.Errorf("discover event %q: %w", details.Identity, err)
	}
	found := HappeningFound{HappeningDiscovered: ev.Found()}
	for _, e := range decided {
		switch e.(type) {
		case domain.HappeningDiscovered:
			found.New = true
		case domain.HappeningChanged:
			found.Changed = true
		}
	}
	return found, res, nil
}

// AddHappeningItem puts a happening into an event feed through one of its
// attachments.
type AddHappeningItem struct {
	domain.ItemTarget
	HappeningID uuid.UUID
}

// AddHappeningItem appends the item when the feed does not have the happening yet
// (added is true: this is what event.item_added announces), or links it to
// the attachment when another one brought it; nothing when the attachment
// already did.
func (h *Handler) AddHappeningItem(ctx context.Context, c AddHappeningItem) (added bool, res Result, err error) {
	var start time.Time
	if g := h.happeningCopies; g != nil {
		f := g.feed(c.FeedID)
		f.lock.Lock()
		defer f.lock.Unlock()
		var done bool
		if done, res, start, err = h.addHappeningCopy(ctx, c); err != nil || done {
			return false, res, err
		}
		defer func() {
			if added && !start.IsZero() {
				g.remember(c.FeedID, c.HappeningID, start, h.now())
			}
		}()
	}
	_, res, err = decide(ctx, h, change[*domain.HappeningItem]{
		stream: domain.HappeningItemStream(c.FeedID, c.HappeningID), org: c.OrganizationID,
		empty: func() *domain.HappeningItem { return &domain.HappeningItem{} },
		decide: func(i *domain.HappeningItem) ([]domain.Event, error) {
			events := i.Add(c.ItemTarget, c.HappeningID, h.now())
			for _, e := range events {
				if _, ok := e.(domain.HappeningItemAdded); ok {
					added = true
				}
			}
			return events, nil
		},
	})
	if err != nil {
		return false, Result{}, fmt.Errorf("add event %s to feed %s: %w", c.HappeningID, c.FeedID, err)
	}
	return added, res, nil
}
