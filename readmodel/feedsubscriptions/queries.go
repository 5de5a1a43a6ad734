package feedsubscriptions

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"database/sql"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/feedsvc/feedsvc/domain"
)

// Queries answers reads of the subscription addresses.
type Queries struct{ db bun.IDB }

// NewQueries returns the subscriptions' query side over db.
func NewQueries(db bun.IDB) *Queries { return &Queries{db: db} }

// List returns the addresses of a feed, oldest first. The caller has
// checked that the feed is the organization's.
func (q *Queries) List(ctx context.Context, org uuid.UUID, kind domain.FeedKind, feedID uuid.UUID) ([]Subscription, error) {
	subs := []Subscription{}
	err := q.db.NewSelect().Model(&subs).Where("organization_id = ? AND feed_kind = ? AND feed_id = ?", org, kind, feedID).
		OrderExpr("created_at, id").Scan(ctx)
	if err != nil {
		return nil, fmt.Errorf("list subscriptions of feed %s: %w", feedID, err)
	}
	return subs, nil
}

// ErrUnknown is a token that opens nothing: malformed, never issued,
// revoked, or not matching its secret. Callers answer every case alike.
var ErrUnknown = errors.New("unknown subscription address")

// Authenticate finds the subscription of a token split into its prefix
// and secret, comparing the secret's hash in constant time.
func (q *Queries) Authenticate(ctx context.Context, prefix string, secret []byte) (Subscription, error) {
	var s Subscription
	err := q.db.NewSelect().Model(&s).Where("prefix = ?", prefix).Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		return Subscription{}, ErrUnknown
	}
	if err != nil {
		return Subscription{}, fmt.Errorf("look up a subscription address: %w", err)
	}
	sum := sha256.Sum256(secret)
	if subtle.ConstantTimeCompare(sum[:], s.SecretHash) != 1 {
		return Subscription{}, ErrUnknown
	}
	return s, nil
}
