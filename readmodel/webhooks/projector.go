package webhooks

import (
	"context"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/projections"
)

// Projector projects webhook subscriptions for the API.
type Projector struct{}

func (Projector) Name() string     { return "webhooks" }
func (Projector) Version() int     { return 1 }
func (Projector) Tables() []string { return []string{"webhooks"} }

func (Projector) Handlers() []projections.Handler { return Handlers("webhooks", nil) }

// Handlers project webhook subscriptions into table, which has the
// columns of webhooks. The webhook dispatcher keeps its own copy with
// them, at its own position in the log; before, when set, runs before each
// change (the dispatcher queues what it deferred, under the subscriptions
// as they stood).
func Handlers(table string, before func(ctx context.Context, db bun.IDB) error) []projections.Handler {
	update := func(ctx context.Context, db bun.IDB, id string, set string, args ...any) error {
		return projections.Exec(db.NewUpdate().Model((*Webhook)(nil)).ModelTableExpr(table+" AS webhook").
			Set(set, args...).Where("id = ?", id).Exec(ctx))
	}
	handlers := []projections.Handler{
		projections.On(func(ctx context.Context, db bun.IDB, e domain.WebhookCreated) error {
			row := Webhook{
				ID: e.WebhookID, OrganizationID: e.OrganizationID, URL: e.URL, Events: e.Events,
				EventFeedIDs: UUIDStrings(e.EventFeedIDs), Filter: e.Filter, Enabled: true, EnabledBy: domain.EnabledByAPI,
				SecretID: e.SecretID, CreatedAt: e.At, UpdatedAt: e.At,
			}
			return projections.Exec(db.NewInsert().Model(&row).ModelTableExpr(table).On("CONFLICT (id) DO NOTHING").Exec(ctx))
		}),
		projections.On(func(ctx context.Context, db bun.IDB, e domain.WebhookChanged) error {
			return update(ctx, db, e.WebhookID.String(), "url = ?, events = ?, event_feed_ids = ?, filter = ?, updated_at = ?",
				e.URL, pgdialect.Array(e.Events), pgdialect.Array(UUIDStrings(e.EventFeedIDs)), e.Filter, e.At)
		}),
		projections.On(func(ctx context.Context, db bun.IDB, e domain.WebhookEnabled) error {
			return update(ctx, db, e.WebhookID.String(), "enabled = true, enabled_by = ?, enabled_reason = ?, updated_at = ?", e.By, e.Reason, e.At)
		}),
		projections.On(func(ctx context.Context, db bun.IDB, e domain.WebhookDisabled) error {
			return update(ctx, db, e.WebhookID.String(), "enabled = false, enabled_by = ?, enabled_reason = ?, updated_at = ?", e.By, e.Reason, e.At)
		}),
		projections.On(func(ctx context.Context, db bun.IDB, e domain.WebhookSecretRotated) error {
			return update(ctx, db, e.WebhookID.String(), "secret_id = ?, previous_secret_id = ?, previous_valid_until = ?, updated_at = ?",
				e.SecretID, e.PreviousSecretID, e.PreviousValidUntil, e.At)
		}),
		projections.On(func(ctx context.Context, db bun.IDB, e domain.WebhookDeleted) error {
			return projections.Exec(db.NewDelete().Model((*Webhook)(nil)).ModelTableExpr(table+" AS webhook").
				Where("id = ?", e.WebhookID).Exec(ctx))
		}),
	}
	if before == nil {
		return handlers
	}
	return projections.Before(before, handlers)
}
