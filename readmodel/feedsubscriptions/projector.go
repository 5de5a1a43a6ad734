// Package feedsubscriptions owns the read model of feeds' secret
// subscription addresses (table feed_subscriptions): the addresses each
// feed has, and the lookup that authenticates a token, with its projector
// and queries. It keeps only each token's prefix and the hash of its
// secret.
package feedsubscriptions

import (
	"context"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/internal/migrate"
	"github.com/feedsvc/feedsvc/projections"
	"github.com/feedsvc/feedsvc/readmodel/feedsubscriptions/migrations"
)

// Subscription is a row of feed_subscriptions.
type Subscription struct {
	bun.BaseModel `bun:"table:feed_subscriptions"`

	ID             uuid.UUID       `bun:"id,pk,type:uuid"`
	OrganizationID uuid.UUID       `bun:"organization_id,type:uuid"`
	FeedKind       domain.FeedKind `bun:"feed_kind"`
	FeedID         uuid.UUID       `bun:"feed_id,type:uuid"`
	Prefix         string          `bun:"prefix"`
	SecretHash     []byte          `bun:"secret_hash"`
	CreatedAt      time.Time       `bun:"created_at"`
}

// Projector projects subscription addresses. API writes wait for it, so a
// created address answers at once and a revoked one stops at once.
type Projector struct{}

func (Projector) Name() string     { return "feedsubscriptions" }
func (Projector) Version() int     { return 1 }
func (Projector) Tables() []string { return []string{"feed_subscriptions"} }

// Migrations are its tables' migrations, in the package migrations
// beside it; the service's schema applies them with every other owner's.
func (Projector) Migrations() migrate.Owner { return migrations.Owner }

func (Projector) Handlers() []projections.Handler {
	return []projections.Handler{
		projections.On(func(ctx context.Context, db bun.IDB, e domain.FeedSubscriptionCreated) error {
			hash, err := hex.DecodeString(e.SecretHash)
			if err != nil {
				return fmt.Errorf("subscription %s has an unreadable secret hash: %w", e.SubscriptionID, err)
			}
			row := Subscription{ID: e.SubscriptionID, OrganizationID: e.OrganizationID, FeedKind: e.FeedKind, FeedID: e.FeedID,
				Prefix: e.Prefix, SecretHash: hash, CreatedAt: e.At}
			return projections.Exec(db.NewInsert().Model(&row).On("CONFLICT (id) DO NOTHING").Exec(ctx))
		}),
		projections.On(func(ctx context.Context, db bun.IDB, e domain.FeedSubscriptionRevoked) error {
			return projections.Exec(db.NewDelete().Model((*Subscription)(nil)).Where("id = ?", e.SubscriptionID).Exec(ctx))
		}),
	}
}
