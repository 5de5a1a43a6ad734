package projections

import (
	"context"
	"fmt"

	"github.com/uptrace/bun"

	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/readmodel"
)

// Feeds projects feeds of every kind and their source attachments.
type Feeds struct{}

func (Feeds) Name() string     { return "feeds" }
func (Feeds) Version() int     { return 1 }
func (Feeds) Tables() []string { return []string{"feeds", "feed_sources"} }

func (Feeds) Handlers() []Handler {
	return []Handler{
		On(func(ctx context.Context, db bun.IDB, e domain.FeedCreated) error {
			row := readmodel.Feed{
				ID: e.FeedID, Kind: e.Kind, OrganizationID: e.OrganizationID, Name: e.Name, Description: e.Description,
				Enabled: e.Enabled == nil || *e.Enabled, EnabledBy: e.EnabledBy, Config: e.Config, CreatedAt: e.At, UpdatedAt: e.At,
			}
			return exec(db.NewInsert().Model(&row).On("CONFLICT (id) DO NOTHING").Exec(ctx))
		}),
		On(func(ctx context.Context, db bun.IDB, e domain.FeedRenamed) error {
			return updateFeed(ctx, db, e.FeedID.String(), e.At, "name = ?", e.Name)
		}),
		On(func(ctx context.Context, db bun.IDB, e domain.FeedDescribed) error {
			return updateFeed(ctx, db, e.FeedID.String(), e.At, "description = ?", e.Description)
		}),
		On(func(ctx context.Context, db bun.IDB, e domain.FeedEnabled) error {
			return updateFeed(ctx, db, e.FeedID.String(), e.At, "enabled = true, enabled_by = ?, enabled_reason = ?", e.By, e.Reason)
		}),
		On(func(ctx context.Context, db bun.IDB, e domain.FeedDisabled) error {
			return updateFeed(ctx, db, e.FeedID.String(), e.At, "enabled = false, enabled_by = ?, enabled_reason = ?", e.By, e.Reason)
		}),
		On(func(ctx context.Context, db bun.IDB, e domain.FeedConfigured) error {
			return updateFeed(ctx, db, e.FeedID.String(), e.At, "config = ?", &e.Config)
		}),
		On(func(ctx context.Context, db bun.IDB, e domain.FeedDeleted) error {
			if err := exec(db.NewDelete().Model((*readmodel.FeedSource)(nil)).Where("feed_id = ?", e.FeedID).Exec(ctx)); err != nil {
				return err
			}
			return exec(db.NewDelete().Model((*readmodel.Feed)(nil)).Where("id = ?", e.FeedID).Exec(ctx))
		}),
		On(func(ctx context.Context, db bun.IDB, e domain.SourceAttached) error {
			row := readmodel.FeedSource{
				ID: e.AttachmentID, Kind: e.Kind, FeedID: e.FeedID, OrganizationID: e.OrganizationID, SourceID: e.SourceID,
				SourceType: string(e.SourceType), Details: e.Details, Enabled: true, CreatedAt: e.At, UpdatedAt: e.At,
			}
			return exec(db.NewInsert().Model(&row).On("CONFLICT (id) DO NOTHING").Exec(ctx))
		}),
		On(func(ctx context.Context, db bun.IDB, e domain.SourceEnabled) error {
			return updateAttachment(ctx, db, e.AttachmentID.String(), true, e.At)
		}),
		On(func(ctx context.Context, db bun.IDB, e domain.SourceDisabled) error {
			return updateAttachment(ctx, db, e.AttachmentID.String(), false, e.At)
		}),
		On(func(ctx context.Context, db bun.IDB, e domain.SourceDetached) error {
			return exec(db.NewDelete().Model((*readmodel.FeedSource)(nil)).Where("id = ?", e.AttachmentID).Exec(ctx))
		}),
	}
}

// kinded is a feed event, which says which kind of feed it happened to.
type kinded interface {
	domain.Event
	FeedKind() domain.FeedKind
}

// ofKind keeps a handler of feed events to the events of one kind of feed.
func ofKind[E kinded](kind domain.FeedKind, f func(ctx context.Context, db bun.IDB, e E) error) func(ctx context.Context, db bun.IDB, e E) error {
	return func(ctx context.Context, db bun.IDB, e E) error {
		if e.FeedKind() != kind {
			return nil
		}
		return f(ctx, db, e)
	}
}

func updateFeed(ctx context.Context, db bun.IDB, id string, at any, set string, args ...any) error {
	return exec(db.NewUpdate().Model((*readmodel.Feed)(nil)).
		Set(set, args...).Set("updated_at = ?", at).Where("id = ?", id).Exec(ctx))
}

func updateAttachment(ctx context.Context, db bun.IDB, id string, enabled bool, at any) error {
	return exec(db.NewUpdate().Model((*readmodel.FeedSource)(nil)).
		Set("enabled = ?", enabled).Set("updated_at = ?", at).Where("id = ?", id).Exec(ctx))
}

func exec(_ any, err error) error {
	if err != nil {
		return fmt.Errorf("write read model: %w", err)
	}
	return nil
}
