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
func (NewsFeeds) EventTypes() []string {
	return []string{
		domain.NewsFeedCreated{}.EventType(), domain.NewsFeedRenamed{}.EventType(),
		domain.NewsFeedDescribed{}.EventType(), domain.NewsFeedEnabled{}.EventType(),
		domain.NewsFeedDisabled{}.EventType(), domain.NewsFeedDeleted{}.EventType(),
		domain.NewsSourceAttached{}.EventType(), domain.NewsSourceEnabled{}.EventType(),
		domain.NewsSourceDisabled{}.EventType(), domain.NewsSourceDetached{}.EventType(),
	}
}

func (NewsFeeds) Project(ctx context.Context, db bun.IDB, env Envelope) error {
	switch e := env.Event.(type) {
	case domain.NewsFeedCreated:
		row := readmodel.NewsFeed{
			ID: e.FeedID, OrganizationID: e.OrganizationID, Name: e.Name, Description: e.Description,
			Enabled: true, CreatedAt: e.At, UpdatedAt: e.At,
		}
		return exec(db.NewInsert().Model(&row).On("CONFLICT (id) DO NOTHING").Exec(ctx))
	case domain.NewsFeedRenamed:
		return updateFeed(ctx, db, e.FeedID.String(), "name = ?", e.Name, e.At)
	case domain.NewsFeedDescribed:
		return updateFeed(ctx, db, e.FeedID.String(), "description = ?", e.Description, e.At)
	case domain.NewsFeedEnabled:
		return updateFeed(ctx, db, e.FeedID.String(), "enabled = ?", true, e.At)
	case domain.NewsFeedDisabled:
		return updateFeed(ctx, db, e.FeedID.String(), "enabled = ?", false, e.At)
	case domain.NewsFeedDeleted:
		if err := exec(db.NewDelete().Model((*readmodel.NewsFeedSource)(nil)).Where("feed_id = ?", e.FeedID).Exec(ctx)); err != nil {
			return err
		}
		return exec(db.NewDelete().Model((*readmodel.NewsFeed)(nil)).Where("id = ?", e.FeedID).Exec(ctx))
	case domain.NewsSourceAttached:
		row := readmodel.NewsFeedSource{
			ID: e.AttachmentID, FeedID: e.FeedID, OrganizationID: e.OrganizationID, SourceID: e.SourceID,
			SourceType: string(e.SourceType), Details: e.Details, Enabled: true, CreatedAt: e.At, UpdatedAt: e.At,
		}
		return exec(db.NewInsert().Model(&row).On("CONFLICT (id) DO NOTHING").Exec(ctx))
	case domain.NewsSourceEnabled:
		return updateAttachment(ctx, db, e.AttachmentID.String(), true, e.At)
	case domain.NewsSourceDisabled:
		return updateAttachment(ctx, db, e.AttachmentID.String(), false, e.At)
	case domain.NewsSourceDetached:
		return exec(db.NewDelete().Model((*readmodel.NewsFeedSource)(nil)).Where("id = ?", e.AttachmentID).Exec(ctx))
	}
	return nil
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
