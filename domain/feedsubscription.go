package domain

import (
	"time"

	"github.com/google/uuid"
)

// A feed subscription is a secret address of one feed's outputs (its
// Atom and JSON Feed documents, or its calendar), for feed readers and
// calendar apps, which cannot send an Authorization header: a capability
// URL, read-only and scoped to the feed. The log keeps only the token's
// lookup prefix and the SHA-256 of its secret, never the token, so
// neither the log nor the read model can give an address away.

// FeedSubscriptionStream is the stream of one subscription address.
func FeedSubscriptionStream(id uuid.UUID) string { return "feedsubscription-" + id.String() }

// FeedSubscriptionCreated: an organization made a secret address of a
// feed.
type FeedSubscriptionCreated struct {
	SubscriptionID uuid.UUID `json:"subscriptionId"`
	OrganizationID uuid.UUID `json:"organizationId"`
	FeedKind       FeedKind  `json:"feedKind"`
	FeedID         uuid.UUID `json:"feedId"`
	// Prefix finds the subscription of a token; SecretHash is the SHA-256
	// of the token's secret, in hex.
	Prefix     string    `json:"prefix"`
	SecretHash string    `json:"secretHash"`
	At         time.Time `json:"at"`
}

// FeedSubscriptionRevoked: the address stops answering.
type FeedSubscriptionRevoked struct {
	SubscriptionID uuid.UUID `json:"subscriptionId"`
	At             time.Time `json:"at"`
}

func (FeedSubscriptionCreated) EventType() string { return "FeedSubscriptionCreated" }
func (FeedSubscriptionRevoked) EventType() string { return "FeedSubscriptionRevoked" }

func init() {
	register(func() Event { return &FeedSubscriptionCreated{} })
	register(func() Event { return &FeedSubscriptionRevoked{} })
}

// FeedSubscription is one secret address as the log has it.
type FeedSubscription struct {
	id      uuid.UUID
	org     uuid.UUID
	kind    FeedKind
	feedID  uuid.UUID
	revoked bool
}

func (s *FeedSubscription) Apply(e Event) {
	switch ev := e.(type) {
	case FeedSubscriptionCreated:
		s.id, s.org, s.kind, s.feedID = ev.SubscriptionID, ev.OrganizationID, ev.FeedKind, ev.FeedID
	case FeedSubscriptionRevoked:
		s.revoked = true
	}
}

// Create decides a new address of feed (of kind, org's) whose token has
// prefix and a secret hashing to secretHash.
func (s *FeedSubscription) Create(id, org uuid.UUID, kind FeedKind, feed uuid.UUID, prefix, secretHash string, now time.Time) ([]Event, error) {
	if s.id != uuid.Nil {
		return nil, &ConflictError{Message: "subscription already exists"}
	}
	return []Event{FeedSubscriptionCreated{
		SubscriptionID: id, OrganizationID: org, FeedKind: kind, FeedID: feed, Prefix: prefix, SecretHash: secretHash, At: now,
	}}, nil
}

// Revoke decides the end of an address of org's feed of kind; another
// feed's, organization's or a revoked one is not found.
func (s *FeedSubscription) Revoke(org uuid.UUID, kind FeedKind, feed, id uuid.UUID, now time.Time) ([]Event, error) {
	if s.id == uuid.Nil || s.revoked || s.org != org || s.kind != kind || s.feedID != feed {
		return nil, notFound("subscription", id.String())
	}
	return []Event{FeedSubscriptionRevoked{SubscriptionID: s.id, At: now}}, nil
}
