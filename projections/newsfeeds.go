package projections

import (
	"context"
	"fmt"

	"github.com/uptrace/bun"

	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/readmodel"
)

// NewsFeeds projects news feeds and their source attachments.
type NewsFeeds struct{}

func (NewsFeeds) Name() string     { return "newsfeeds" }
func (NewsFeeds) Tables() []string { return []string{"news_feeds", "news_feed_sources"} }

func (NewsFeeds) Handlers() []Handler {
	return []Handler{
		On(news(func(ctx context.Context, db bun.IDB, e domain.FeedCreated) error {
			row := readmodel.NewsFeed{
				ID: e.FeedID, OrganizationID: e.OrganizationID, Name: e.Name, Description: e.Description,
				Enabled: true, CreatedAt: e.At, UpdatedAt: e.At,
			}
			return exec(db.NewInsert().Model(&row).On("CONFLICT (id) DO NOTHING").Exec(ctx))
		})),
		On(news(func(ctx context.Context, db bun.IDB, e domain.FeedRenamed) error {
			return updateFeed(ctx, db, e.FeedID.String(), "name = ?", e.Name, e.At)
		})),
		On(news(func(ctx context.Context, db bun.IDB, e domain.FeedDescribed) error {
			return updateFeed(ctx, db, e.FeedID.String(), "description = ?", e.Description, e.At)
		})),
		On(news(func(ctx context.Context, db bun.IDB, e domain.FeedEnabled) error {
			return updateFeed(ctx, db, e.FeedID.String(), "enabled = ?", true, e.At)
		})),
		On(news(func(ctx context.Context, db bun.IDB, e domain.FeedDisabled) error {
			return updateFeed(ctx, db, e.FeedID.String(), "enabled = ?", false, e.At)
		})),
		On(news(func(ctx context.Context, db bun.IDB, e domain.FeedDeleted) error {
			if err := exec(db.NewDelete().Model((*readmodel.NewsFeedSource)(nil)).Where("feed_id = ?", e.FeedID).Exec(ctx)); err != nil {
				return err
			}
			return exec(db.NewDelete().Model((*readmodel.NewsFeed)(nil)).Where("id = ?", e.FeedID).Exec(ctx))
		})),
		On(news(func(ctx context.Context, db bun.IDB, e domain.SourceAttached) error {
			row := readmodel.NewsFeedSource{
				ID: e.AttachmentID, FeedID: e.FeedID, OrganizationID: e.OrganizationID, SourceID: e.SourceID,
				SourceType: string(e.SourceType), Details: e.Details, Enabled: true, CreatedAt: e.At, UpdatedAt: e.At,
			}
			return exec(db.NewInsert().Model(&row).On("CONFLICT (id) DO NOTHING").Exec(ctx))
		})),
		On(news(func(ctx context.Context, db bun.IDB, e domain.SourceEnabled) error {
			return updateAttachment(ctx, db, e.AttachmentID.String(), true, e.At)
		})),
		On(news(func(ctx context.Context, db bun.IDB, e domain.SourceDisabled) error {
			return updateAttachment(ctx, db, e.AttachmentID.String(), false, e.At)
		})),
		On(news(func(ctx context.Context, db bun.IDB, e domain.SourceDetached) error {
			return exec(db.NewDelete().Model((*readmodel.NewsFeedSource)(nil)).Where("id = ?", e.AttachmentID).Exec(ctx))
		})),
	}
}

// kinded is a feed event, which says which kind of feed it happened to.
type kinded interface {
	domain.Event
	FeedKind() domain.FeedKind
}

// news keeps a handler of feed events to news feeds' events.
func news[E kinded](f func(ctx context.Context, db bun.IDB, e E) error) func(ctx context.Context, db bun.IDB, e E) error {
	return func(ctx context.Context, db bun.IDB, e E) error {
		if e.FeedKind() != domain.FeedNews {
			return nil
		}
		return f(ctx, db, e)
	}
}

func updateFeed(ctx context.Context, db bun.IDB, id, set string, value any, at any) error {
	return exec(db.NewUpdate().Model((*readmodel.NewsFeed)(nil)).
		Set(set, value).Set("updated_at = ?", at).Where("id = ?", id).Exec(ctx))
}

func updateAttachment(ctx context.Context, db bun.IDB, id string, enabled bool, at any) error {
	return exec(db.NewUpdate().Model((*readmodel.NewsFeedSource)(nil)).
		Set("enabled = ?", enabled).Set("updated_at = ?", at).Where("id = ?", id).Exec(ctx))
}

func exec(_ any, err error) error {
	if err != nil {
		return fmt.Errorf("write read model: %w", err)
	}
	return nil
}
