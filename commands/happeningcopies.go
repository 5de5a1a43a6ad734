package commands

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/domain/nearcopy"
	"github.com/feedsvc/feedsvc/domain/stream"
)

// HappeningCopyFinder finds the happenings of an event feed's items that
// start at a time (the event items read model): the candidates a new
// happening may be another listing of.
type HappeningCopyFinder interface {
	HappeningsStartingAt(ctx context.Context, feedID uuid.UUID, start time.Time) ([]uuid.UUID, error)
}

// FindingHappeningCopies has a happening that is one of an event feed's
// items as another source lists it (nearcopy.SameHappening) recorded as
// that item's (HappeningItemCopyFound) instead of becoming an item.
func FindingHappeningCopies(f HappeningCopyFinder) Option {
	return func(h *Handler) {
		h.happeningCopies = &happeningGuard{finder: f, feeds: map[uuid.UUID]*feedHappenings{}}
	}
}

// maxHappeningCandidates bounds the happenings compared with a new one.
const maxHappeningCandidates = 20

// happeningGuard is copyGuard for event feeds: one add per feed at a time,
// and what this process added lately remembered, so that a happening two
// sources list is found though the read model has not caught up.
type happeningGuard struct {
	finder HappeningCopyFinder
	mu     sync.Mutex
	feeds  map[uuid.UUID]*feedHappenings
}

type feedHappenings struct {
	lock   sync.Mutex
	recent []recentHappening // guarded by happeningGuard.mu
}

type recentHappening struct {
	id    uuid.UUID
	start time.Time
	at    time.Time
}

func (g *happeningGuard) feed(id uuid.UUID) *feedHappenings {
	g.mu.Lock()
	defer g.mu.Unlock()
	f := g.feeds[id]
	if f == nil {
		f = &feedHappenings{}
		g.feeds[id] = f
	}
	return f
}

func (g *happeningGuard) remember(feedID, happeningID uuid.UUID, start, now time.Time) {
	f := g.feed(feedID)
	g.mu.Lock()
	defer g.mu.Unlock()
	f.recent = append(f.recent, recentHappening{id: happeningID, start: start, at: now})
}

// candidates are the happenings of the feed's items starting at start.
func (g *happeningGuard) candidates(ctx context.Context, feedID uuid.UUID, start, now time.Time) ([]uuid.UUID, error) {
	f := g.feed(feedID)
	var out []uuid.UUID
	g.mu.Lock()
	f.recent = slices.DeleteFunc(f.recent, func(r recentHappening) bool { return now.Sub(r.at) > recentFor })
	for _, r := range f.recent {
		if r.start.Equal(start) {
			out = append(out, r.id)
		}
	}
	g.mu.Unlock()
	found, err := g.finder.HappeningsStartingAt(ctx, feedID, start)
	if err != nil {
		return nil, fmt.Errorf("find events of feed %s starting at %s: %w", feedID, start, err)
	}
	for _, id := range found {
		if !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out, nil
}

// ArticleText reads the running text an article was discovered with
// (domain.ArticleContent.Text): only its ArticleDiscovered carries it.
func (h *Handler) ArticleText(ctx context.Context, canonicalURL string) (string, error) {
	recs, err := stream.Load(ctx, h.store, domain.ArticleStream(canonicalURL))
	if err != nil {
		return "", err
	}
	var a domain.Article
	apply(&a, recs)
	return a.Discovery().Content.Text, nil
}

// HappeningDetails reads a happening's current details, and whether it
// was recorded.
func (h *Handler) HappeningDetails(ctx context.Context, id uuid.UUID) (domain.HappeningDetails, bool, error) {
	recs, err := stream.Load(ctx, h.store, domain.HappeningStream(id))
	if err != nil {
		return domain.HappeningDetails{}, false, err
	}
	var hp domain.Happening
	apply(&hp, recs)
	return hp.Details(), hp.Exists(), nil
}

// happeningListing reads what deciding whether c's happening is a copy
// takes; decides is false when there is nothing to decide: the feed has
// the happening's own item already, the happening is not recorded, or its
// listing has no start to find other listings by.
func (h *Handler) happeningListing(ctx context.Context, c AddHappeningItem) (details domain.HappeningDetails, listing nearcopy.Listing, decides bool, err error) {
	own, err := stream.Load(ctx, h.store, domain.HappeningItemStream(c.FeedID, c.HappeningID))
	if err != nil || len(own) > 0 {
		return details, listing, false, err
	}
	details, ok, err := h.HappeningDetails(ctx, c.HappeningID)
	if err != nil || !ok {
		return details, listing, false, err
	}
	listing = details.Listing()
	return details, listing, !listing.Start.IsZero(), nil
}

// addHappeningCopy records c's happening (details, listing) as the copy
// of an item of its feed when it is one; done is false when c is to be
// decided as usual (the feed has no item it is a copy of). The caller
// holds the feed's locks.
func (h *Handler) addHappeningCopy(ctx context.Context, c AddHappeningItem, details domain.HappeningDetails, listing nearcopy.Listing) (done bool, res Result, err error) {
	ids, err := h.happeningCopies.candidates(ctx, c.FeedID, listing.Start, h.now())
	if err != nil {
		return false, Result{}, err
	}
	checked := 0
	for _, id := range ids {
		if id == c.HappeningID {
			continue
		}
		if checked++; checked > maxHappeningCandidates {
			break
		}
		other, ok, err := h.HappeningDetails(ctx, id)
		if err != nil {
			return false, Result{}, err
		}
		if !ok || !nearcopy.SameHappening(other.Listing(), listing) {
			continue
		}
		var exists bool
		_, res, err := decide(ctx, h, change[*domain.HappeningItem]{
			stream: domain.HappeningItemStream(c.FeedID, id), org: c.OrganizationID,
			empty: func() *domain.HappeningItem { return &domain.HappeningItem{} },
			decide: func(i *domain.HappeningItem) ([]domain.Event, error) {
				exists = i.Exists()
				return i.AddCopy(c.ItemTarget, c.HappeningID, details, h.now()), nil
			},
		})
		if err != nil {
			return false, Result{}, fmt.Errorf("record event %s as a copy of %s in feed %s: %w", c.HappeningID, id, c.FeedID, err)
		}
		if exists {
			return true, res, nil
		}
	}
	return false, Result{}, nil
}

// SplitHappeningCopy splits a happening recorded as an event item's (a
// wrong merge) off it: the happening becomes an item of its own and is
// never merged into that item again.
type SplitHappeningCopy struct {
	FeedRef
	ItemID uuid.UUID
	// CopyID is the copy's happening (its eventId in the item's copies).
	CopyID uuid.UUID
}

// SplitHappeningCopy appends the split to the item's stream and the new
// item to the copy's own item stream, in one multi-stream append; it
// returns the new item's id (domain.HappeningItemID of the feed and the
// copy).
func (h *Handler) SplitHappeningCopy(ctx context.Context, c SplitHappeningCopy) (uuid.UUID, Result, error) {
	ref, err := h.lookups.ItemRef(ctx, domain.FeedHappenings, c.Org, c.FeedID, c.ItemID)
	if err != nil {
		return uuid.Nil, Result{}, err
	}
	var added domain.HappeningItemAdded
	_, results, err := decideAll(ctx, h, []change[*domain.HappeningItem]{{
		stream: domain.HappeningItemStream(c.FeedID, ref.HappeningID), org: c.Org,
		empty: func() *domain.HappeningItem { return &domain.HappeningItem{} },
		decide: func(it *domain.HappeningItem) ([]domain.Event, error) {
			split, a, err := it.SplitCopy(c.Org, c.ItemID, c.CopyID, h.now())
			if err != nil {
				return nil, err
			}
			added = a
			return []domain.Event{split}, nil
		},
	}, {
		stream: domain.HappeningItemStream(c.FeedID, c.CopyID), org: c.Org,
		empty: func() *domain.HappeningItem { return &domain.HappeningItem{} },
		decide: func(it *domain.HappeningItem) ([]domain.Event, error) {
			if it.Exists() {
				return nil, nil
			}
			return []domain.Event{added}, nil
		},
	}})
	if err != nil {
		return uuid.Nil, Result{}, fmt.Errorf("split event %s off item %s: %w", c.CopyID, c.ItemID, err)
	}
	return added.ItemID, results[0].Merge(results[1]), nil
}
