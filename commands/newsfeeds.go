package commands

import (
	"context"
	"fmt"

	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/domain"
)

// CreateNewsFeed creates a feed for org.
type CreateNewsFeed struct {
	Org         uuid.UUID
	Name        string
	Description string
}

// UpdateNewsFeed changes the members of a feed that are set.
type UpdateNewsFeed struct {
	Org    uuid.UUID
	FeedID uuid.UUID
	Update domain.FeedUpdate
}

// DeleteNewsFeed deletes a feed permanently.
type DeleteNewsFeed struct {
	Org    uuid.UUID
	FeedID uuid.UUID
}

// CreateNewsFeed decides and stores a new feed and returns its id.
func (h *Handler) CreateNewsFeed(ctx context.Context, c CreateNewsFeed) (uuid.UUID, Result, error) {
	id := h.newID()
	feed, err := domain.CreateNewsFeed(id, c.Org, c.Name, c.Description, h.now())
	if err != nil {
		return uuid.Nil, Result{}, err
	}
	res, err := h.append(ctx, domain.NewsFeedStream(id), expectedAfter(0), c.Org, feed.Changes())
	if err != nil {
		return uuid.Nil, Result{}, fmt.Errorf("create news feed: %w", err)
	}
	return id, res, nil
}

// UpdateNewsFeed applies a partial update.
func (h *Handler) UpdateNewsFeed(ctx context.Context, c UpdateNewsFeed) (Result, error) {
	return h.changeFeed(ctx, c.Org, c.FeedID, func(f *domain.NewsFeed) error {
		return f.Update(c.Update, h.now())
	})
}

// DeleteNewsFeed deletes a feed.
func (h *Handler) DeleteNewsFeed(ctx context.Context, c DeleteNewsFeed) (Result, error) {
	return h.changeFeed(ctx, c.Org, c.FeedID, func(f *domain.NewsFeed) error {
		return f.Delete(h.now())
	})
}

// LoadNewsFeed returns the feed as org sees it, or a not-found error.
func (h *Handler) LoadNewsFeed(ctx context.Context, org, feedID uuid.UUID) (*domain.NewsFeed, error) {
	feed, _, err := h.loadNewsFeedSeen(ctx, org, feedID)
	return feed, err
}

// loadNewsFeedSeen also reports the stored events the state was built from.
func (h *Handler) loadNewsFeedSeen(ctx context.Context, org, feedID uuid.UUID) (*domain.NewsFeed, Result, error) {
	events, seen, err := h.readStreamSeen(ctx, domain.NewsFeedStream(feedID))
	if err != nil {
		return nil, Result{}, fmt.Errorf("load news feed %s: %w", feedID, err)
	}
	feed := domain.LoadNewsFeed(events)
	if !feed.VisibleTo(org) {
		return nil, Result{}, &domain.NotFoundError{Resource: "feed", ID: feedID.String()}
	}
	return feed, seen, nil
}

// changeFeed is the load-decide-append loop every feed command shares.
// A decision that changes nothing still reports what it read, so the caller
// waits for a concurrent writer's change before answering (D6).
func (h *Handler) changeFeed(ctx context.Context, org, feedID uuid.UUID, decide func(*domain.NewsFeed) error) (Result, error) {
	var res Result
	err := retry(ctx, func() error {
		feed, seen, err := h.loadNewsFeedSeen(ctx, org, feedID)
		if err != nil {
			return err
		}
		if err := decide(feed); err != nil {
			return err
		}
		res, err = h.appendDecided(ctx, domain.NewsFeedStream(feedID), expectedAfter(feed.Version()), org, feed.Changes(), seen)
		return err
	})
	return res, err
}
