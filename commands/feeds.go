package commands

import (
	"context"
	"fmt"

	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/domain"
)

// FeedRef names a feed of some kind as one organization asks for it.
type FeedRef struct {
	Kind   domain.FeedKind
	Org    uuid.UUID
	FeedID uuid.UUID
}

// CreateFeed creates a feed of a kind for an organization.
type CreateFeed struct {
	Kind        domain.FeedKind
	Org         uuid.UUID
	Name        string
	Description string
	Options     domain.FeedOptions
}

// UpdateFeed changes the members of a feed that are set.
type UpdateFeed struct {
	FeedRef
	Update domain.FeedUpdate
}

// CreateFeed decides and stores a new feed.
func (h *Handler) CreateFeed(ctx context.Context, c CreateFeed) (domain.FeedState, Result, error) {
	id := h.newID("feed")
	feed, res, err := decide(ctx, h, change[*domain.Feed]{
		stream: domain.FeedStream(c.Kind, id), org: c.Org,
		empty: func() *domain.Feed { return domain.NewFeed(c.Kind) },
		decide: func(f *domain.Feed) ([]domain.Event, error) {
			return f.Create(id, c.Org, c.Name, c.Description, c.Options, h.now())
		},
	})
	if err != nil {
		return domain.FeedState{}, Result{}, fmt.Errorf("create %s feed: %w", c.Kind, err)
	}
	return feed.State(), res, nil
}

// UpdateFeed applies a partial update and returns the feed as it left it.
func (h *Handler) UpdateFeed(ctx context.Context, c UpdateFeed) (domain.FeedState, Result, error) {
	feed, res, err := h.changeFeed(ctx, c.FeedRef, func(f *domain.Feed) ([]domain.Event, error) {
		return f.Update(c.Update, h.now())
	})
	if err != nil {
		return domain.FeedState{}, Result{}, err
	}
	return feed.State(), res, nil
}

// SetFeedEnabled is a switch of a feed by the operator (By admin) or the
// service itself (By system), for whichever organization owns it.
type SetFeedEnabled struct {
	Kind    domain.FeedKind
	FeedID  uuid.UUID
	Enabled bool
	By      string
	Reason  string
}

// SetFeedEnabled enables or disables a feed on behalf of the operator or
// the service and returns the feed as it left it.
func (h *Handler) SetFeedEnabled(ctx context.Context, c SetFeedEnabled) (domain.FeedState, Result, error) {
	feed, res, err := decide(ctx, h, change[*domain.Feed]{
		stream: domain.FeedStream(c.Kind, c.FeedID),
		empty:  func() *domain.Feed { return domain.NewFeed(c.Kind) },
		decide: func(f *domain.Feed) ([]domain.Event, error) {
			enabled := c.Enabled
			return f.Update(domain.FeedUpdate{Enabled: &enabled, By: c.By, Reason: c.Reason}, h.now())
		},
	})
	if err != nil {
		return domain.FeedState{}, Result{}, fmt.Errorf("set %s feed %s enabled: %w", c.Kind, c.FeedID, err)
	}
	return feed.State(), res, nil
}

// DeleteFeed deletes a feed.
func (h *Handler) DeleteFeed(ctx context.Context, c FeedRef) (Result, error) {
	_, res, err := h.changeFeed(ctx, c, func(f *domain.Feed) ([]domain.Event, error) {
		return f.Delete(h.now())
	})
	return res, err
}

// changeFeed runs a decision on a feed the organization can see.
func (h *Handler) changeFeed(ctx context.Context, ref FeedRef, decideFeed func(*domain.Feed) ([]domain.Event, error)) (*domain.Feed, Result, error) {
	feed, res, err := decide(ctx, h, change[*domain.Feed]{
		stream: domain.FeedStream(ref.Kind, ref.FeedID), org: ref.Org,
		empty: func() *domain.Feed { return domain.NewFeed(ref.Kind) },
		decide: func(f *domain.Feed) ([]domain.Event, error) {
			if !f.VisibleTo(ref.Org) {
				return nil, &domain.NotFoundError{Resource: "feed", ID: ref.FeedID.String()}
			}
			return decideFeed(f)
		},
	})
	if err != nil {
		return nil, Result{}, fmt.Errorf("change %s feed %s: %w", ref.Kind, ref.FeedID, err)
	}
	return feed, res, nil
}
