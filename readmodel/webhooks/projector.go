package projections

import (
	"context"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/readmodel"
)

// Webhooks projects webhook subscriptions for the API.
type Webhooks struct{}

func (Webhooks) Name() string     { return "webhooks" }
func (Webhooks) Version() int     { return 1 }
func (Webhooks) Tables() []string { return []string{"webhooks"} }

func (Webhooks) Handlers() []Handler { return WebhookHandlers("webhooks", nil) }

// WebhookHandlers project webhook subscriptions into table, which has the
// columns of webhooks. The webhook dispatcher keeps its own copy with
// them, at its own position in the log; before, when set, runs before each
// change (the dispatcher queues what it deferred, under the subscriptions
// as they stood).
func WebhookHandlers(table string, before func(ctx context.Context, db bun.IDB) error) []Handler {
	update := func(ctx context.Context, db bun.IDB, id string, set string, args ...any) error {
		return exec(db.NewUpdate().Model((*readmodel.Webhook)(nil)).ModelTableExpr(table+" AS webhook").
			Set(set, args...).Where("id = ?", id).Exec(ctx))
	}
	handlers := []Handler{
		On(func(ctx context.Context, db bun.IDB, e domain.WebhookCreated) error {
			row := readmodel.Webhook{
				ID: e.WebhookID, OrganizationID: e.OrganizationID, URL: e.URL, Events: e.Events,
				EventFeedIDs: readmodel.UUIDStrings(e.EventFeedIDs), Enabled: true, EnabledBy: domain.EnabledByAPI,
				SecretID: e.SecretID, CreatedAt: e.At, UpdatedAt: e.At,
			}
			return exec(db.NewInsert().Model(&row).ModelTableExpr(table).On("CONFLICT (id) DO NOTHING").Exec(ctx))
		}),
		On(func(ctx context.Context, db bun.IDB, e domain.WebhookChanged) error {
			return update(ctx, db, e.WebhookID.String(), "url = ?, events = ?, event_feed_ids = ?, updated_at = ?",
				e.URL, pgdialect.Array(e.Events), pgdialect.Array(readmodel.UUIDStrings(e.EventFeedIDs)), e.At)
		}),
		On(func(ctx context.Context, db bun.IDB, e domain.WebhookEnabled) error {
			return update(ctx, db, e.WebhookID.String(), "enabled = true, enabled_by = ?, enabled_reason = ?, updated_at = ?", e.By, e.Reason, e.At)
		}),
		On(func(ctx context.Context, db bun.IDB, e domain.WebhookDisabled) error {
			return update(ctx, db, e.WebhookID.String(), "enabled = false, enabled_by = ?, enabled_reason = ?, updated_at = ?", e.By, e.Reason, e.At)
		}),
		On(func(ctx context.Context, db bun.IDB, e domain.WebhookSecretRotated) error {
			return update(ctx, db, e.WebhookID.String(), "secret_id = ?, previous_secret_id = ?, previous_valid_until = ?, updated_at = ?",
				e.SecretID, e.PreviousSecretID, e.PreviousValidUntil, e.At)
		}),
		On(func(ctx context.Context, db bun.IDB, e domain.WebhookDeleted) error {
			return exec(db.NewDelete().Model((*readmodel.Webhook)(nil)).ModelTableExpr(table+" AS webhook").
				Where("id = ?", e.WebhookID).Exec(ctx))
		}),
	}
	if before == nil {
		return handlers
	}
	for i, h := range handlers {
		project := h.project
		handlers[i].project = func(ctx context.Context, db bun.IDB, env Envelope) error {
			if err := before(ctx, db); err != nil {
				return err
			}
			return project(ctx, db, env)
		}
	}
	return handlers
}
