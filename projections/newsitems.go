package projections

import (
	"context"

	"github.com/uptrace/bun"

	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/readmodel"
)

// NewsItems projects the items of every news feed and their counts.
// Deleting a feed or a source keeps items (api.md 3): only the feed's
// visibility, checked at read time, hides them.
type NewsItems struct{}

func (NewsItems) Name() string         { return "newsitems" }
func (NewsItems) Tables() []string     { return []string{"news_items", "news_feed_item_counts"} }
func (NewsItems) EventTypes() []string { return []string{domain.NewsItemAdded{}.EventType()} }

func (NewsItems) Project(ctx context.Context, db bun.IDB, env Envelope) error {
	e, ok := env.Event.(domain.NewsItemAdded)
	if !ok {
		return nil
	}
	row := readmodel.NewsItem{
		ID: e.ItemID, FeedID: e.FeedID, OrganizationID: e.OrganizationID, NewsPageID: e.NewsPageID,
		VersionID: e.VersionID, SourceID: e.SourceID, AttachmentID: e.AttachmentID, SourceType: string(e.SourceType),
		URL: e.Content.URL, Title: e.Content.Title, Description: e.Content.Description, ImageURL: e.Content.ImageURL,
		PublishedAt: e.Content.PublishedAt, CreatedAt: e.At, UpdatedAt: e.At,
	}
	res, err := db.NewInsert().Model(&row).On("CONFLICT DO NOTHING").Exec(ctx)
	if err != nil {
		return exec(nil, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return nil
	}
	return exec(db.NewRaw(`INSERT INTO news_feed_item_counts (feed_id, items) VALUES (?, 1)
		ON CONFLICT (feed_id) DO UPDATE SET items = news_feed_item_counts.items + 1`, e.FeedID).Exec(ctx))
}
