package commands

import (
	"context"
	"fmt"

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
// already did. With FindingHappeningCopies, a happening that is another
// listing of an item of the feed is recorded as that item's copy instead;
// with DecidingCopiesAlone too, that decision is made under the feed's
// cross-process lock, held until the event items read model shows it.
func (h *Handler) AddHappeningItem(ctx context.Context, c AddHappeningItem) (added bool, res Result, err error) {
	if g := h.happeningCopies; g != nil {
		f := g.feed(c.FeedID)
		f.lock.Lock()
		defer f.lock.Unlock()
		details, listing, decides, err := h.happeningListing(ctx, c)
		if err != nil {
			return false, Result{}, err
		}
		// A happening the feed has an item of, or one without a start,
		// is no copy of anything: it is added or linked as usual, and
		// no other process's decision can change that, so it takes no
		// cross-process lock (a crawl finding what it found before).
		if decides {
			release, err := h.holdFeeds(ctx, []uuid.UUID{c.FeedID})
			if err != nil {
				return false, Result{}, err
			}
			// Every return below that appended returns what it
			// appended as res.
			defer func() { release(res) }()
			var done bool
			if done, res, err = h.addHappeningCopy(ctx, c, details, listing); err != nil || done {
				return false, res, err
			}
			defer func() {
				if added {
					g.remember(c.FeedID, c.HappeningID, listing.Start, h.now())
				}
			}()
		}
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
