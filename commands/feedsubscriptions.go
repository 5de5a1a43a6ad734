package commands

import (
	"context"
	"fmt"

	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/domain"
)

// CreateFeedSubscription makes a secret address of a feed the caller's
// organization owns (the API checks it); Prefix and SecretHash are the
// token's, minted by the caller, which alone sees the token.
type CreateFeedSubscription struct {
	FeedRef
	Prefix     string
	SecretHash string
}

// RevokeFeedSubscription ends an address of a feed.
type RevokeFeedSubscription struct {
	FeedRef
	ID uuid.UUID
}

// CreateFeedSubscription stores a new address and returns its id and
// creation time.
func (h *Handler) CreateFeedSubscription(ctx context.Context, c CreateFeedSubscription) (domain.FeedSubscriptionCreated, Result, error) {
	id := h.newID("feedsubscription")
	now := h.now()
	_, res, err := decide(ctx, h, change[*domain.FeedSubscription]{
		stream: domain.FeedSubscriptionStream(id), org: c.Org, mostlyNew: true,
		empty: func() *domain.FeedSubscription { return &domain.FeedSubscription{} },
		decide: func(s *domain.FeedSubscription) ([]domain.Event, error) {
			return s.Create(id, c.Org, c.Kind, c.FeedID, c.Prefix, c.SecretHash, now)
		},
	})
	if err != nil {
		return domain.FeedSubscriptionCreated{}, Result{}, fmt.Errorf("create subscription of feed %s: %w", c.FeedID, err)
	}
	return domain.FeedSubscriptionCreated{SubscriptionID: id, OrganizationID: c.Org, FeedKind: c.Kind, FeedID: c.FeedID, At: now}, res, nil
}

// RevokeFeedSubscription revokes an address.
func (h *Handler) RevokeFeedSubscription(ctx context.Context, c RevokeFeedSubscription) (Result, error) {
	_, res, err := decide(ctx, h, change[*domain.FeedSubscription]{
		stream: domain.FeedSubscriptionStream(c.ID), org: c.Org,
		empty: func() *domain.FeedSubscription { return &domain.FeedSubscription{} },
		decide: func(s *domain.FeedSubscription) ([]domain.Event, error) {
			return s.Revoke(c.Org, c.Kind, c.FeedID, c.ID, h.now())
		},
	})
	if err != nil {
		return Result{}, fmt.Errorf("revoke subscription %s: %w", c.ID, err)
	}
	return res, nil
}
