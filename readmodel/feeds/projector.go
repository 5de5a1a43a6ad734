package feeds

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/uptrace/bun"

	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/internal/migrate"
	"github.com/feedsvc/feedsvc/projections"
	"github.com/feedsvc/feedsvc/readmodel/feeds/migrations"
)

// Projector projects feeds of every kind and their source attachments.
type Projector struct{}

func (Projector) Name() string     { return "feeds" }
func (Projector) Version() int     { return 1 }
func (Projector) Tables() []string { return []string{"feeds", "feed_sources"} }

// Migrations are its tables' migrations, in the package migrations
// beside it; the service's schema applies them with every other owner's.
func (Projector) Migrations() migrate.Owner { return migrations.Owner }

func (Projector) Handlers() []projections.Handler {
	return []projections.Handler{
		projections.On(func(ctx context.Context, db bun.IDB, e domain.FeedCreated) error {
			row := Feed{
				ID: e.FeedID, Kind: e.Kind, OrganizationID: e.OrganizationID, Name: e.Name, Description: e.Description,
				Enabled: e.Enabled == nil || *e.Enabled, EnabledBy: e.EnabledBy, Config: e.Config, CreatedAt: e.At, UpdatedAt: e.At,
			}
			return projections.Exec(db.NewInsert().Model(&row).On("CONFLICT (id) DO NOTHING").Exec(ctx))
		}),
		projections.On(func(ctx context.Context, db bun.IDB, e domain.FeedRenamed) error {
			return updateFeed(ctx, db, e.FeedID.String(), e.At, "name = ?", e.Name)
		}),
		projections.On(func(ctx context.Context, db bun.IDB, e domain.FeedDescribed) error {
			return updateFeed(ctx, db, e.FeedID.String(), e.At, "description = ?", e.Description)
		}),
		projections.On(func(ctx context.Context, db bun.IDB, e domain.FeedEnabled) error {
			return updateFeed(ctx, db, e.FeedID.String(), e.At, "enabled = true, enabled_by = ?, enabled_reason = ?", e.By, e.Reason)
		}),
		projections.On(func(ctx context.Context, db bun.IDB, e domain.FeedDisabled) error {
			return updateFeed(ctx, db, e.FeedID.String(), e.At, "enabled = false, enabled_by = ?, enabled_reason = ?", e.By, e.Reason)
		}),
		projections.On(func(ctx context.Context, db bun.IDB, e domain.FeedConfigured) error {
			return updateFeed(ctx, db, e.FeedID.String(), e.At, "config = ?", &e.Config)
		}),
		projections.On(func(ctx context.Context, db bun.IDB, e domain.FeedRulesChanged) error {
			rules, err := RulesJSON(e.Rules)
			if err != nil {
				return err
			}
			return updateFeed(ctx, db, e.FeedID.String(), e.At, "rules = ?::jsonb", rules)
		}),
		projections.On(func(ctx context.Context, db bun.IDB, e domain.FeedDeleted) error {
			if err := projections.Exec(db.NewDelete().Model((*FeedSource)(nil)).Where("feed_id = ?", e.FeedID).Exec(ctx)); err != nil {
				return err
			}
			return projections.Exec(db.NewDelete().Model((*Feed)(nil)).Where("id = ?", e.FeedID).Exec(ctx))
		}),
		projections.On(func(ctx context.Context, db bun.IDB, e domain.SourceAttached) error {
			row := FeedSource{
				ID: e.AttachmentID, Kind: e.Kind, FeedID: e.FeedID, OrganizationID: e.OrganizationID, SourceID: e.SourceID,
				SourceType: string(e.SourceType), Details: e.Details, Enabled: true, CreatedAt: e.At, UpdatedAt: e.At,
			}
			return projections.Exec(db.NewInsert().Model(&row).On("CONFLICT (id) DO NOTHING").Exec(ctx))
		}),
		projections.On(func(ctx context.Context, db bun.IDB, e domain.SourceEnabled) error {
			return updateAttachment(ctx, db, e.AttachmentID.String(), true, e.At)
		}),
		projections.On(func(ctx context.Context, db bun.IDB, e domain.SourceDisabled) error {
			return updateAttachment(ctx, db, e.AttachmentID.String(), false, e.At)
		}),
		projections.On(func(ctx context.Context, db bun.IDB, e domain.SourceDetached) error {
			return projections.Exec(db.NewDelete().Model((*FeedSource)(nil)).Where("id = ?", e.AttachmentID).Exec(ctx))
		}),
	}
}

// RulesJSON is how a feed's rules are stored (feeds.rules, and the
// crawler's copy in ingest_attachments): NULL when there are none.
func RulesJSON(r domain.FeedRules) (*string, error) {
	if r.IsZero() {
		return nil, nil
	}
	raw, err := json.Marshal(r)
	if err != nil {
		return nil, fmt.Errorf("encode feed rules: %w", err)
	}
	s := string(raw)
	return &s, nil
}

func updateFeed(ctx context.Context, db bun.IDB, id string, at any, set string, args ...any) error {
	return projections.Exec(db.NewUpdate().Model((*Feed)(nil)).
		Set(set, args...).Set("updated_at = ?", at).Where("id = ?", id).Exec(ctx))
}

func updateAttachment(ctx context.Context, db bun.IDB, id string, enabled bool, at any) error {
	return projections.Exec(db.NewUpdate().Model((*FeedSource)(nil)).
		Set("enabled = ?", enabled).Set("updated_at = ?", at).Where("id = ?", id).Exec(ctx))
}
