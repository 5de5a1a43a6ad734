// Package copies owns the copies read model: the index that finds the item
// of a news feed an article is a copy of (table news_copy_index), each news
// item's copies (news_item_copies) and each event item's
// (event_item_copies), its projector and its queries. See
// domain/copies.go for what a copy is.
package copies

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/domain/nearcopy"
	"github.com/feedsvc/feedsvc/internal/migrate"
	"github.com/feedsvc/feedsvc/projections"
	"github.com/feedsvc/feedsvc/readmodel/copies/migrations"
)

// Projector projects every news item and copy into the index, and the
// copies of each item.
type Projector struct{}

func (Projector) Name() string { return "copies" }
func (Projector) Version() int { return 1 }
func (Projector) Tables() []string {
	return []string{"news_copy_index", "news_copy_bands", "news_item_copies", "event_item_copies"}
}

// Migrations are its tables' migrations, in the package migrations beside
// it; the service's schema applies them with every other owner's.
func (Projector) Migrations() migrate.Owner { return migrations.Owner }

func (Projector) Handlers() []projections.Handler {
	return []projections.Handler{
		projections.On(projectItem), projections.On(projectCopy), projections.On(projectSplit), projections.On(projectHappeningCopy),
		projections.On(projectHappeningSplit),
	}
}

func projectItem(ctx context.Context, db bun.IDB, e domain.NewsItemAdded) error {
	return index(ctx, db, e.FeedID, e.NewsPageID, e.NewsPageID, e.Content, effectiveAt(e.Content, e.At))
}

func projectCopy(ctx context.Context, db bun.IDB, e domain.NewsItemCopyFound) error {
	if err := index(ctx, db, e.FeedID, e.NewsPageID, e.ItemNewsPageID, e.Content, effectiveAt(e.Content, e.At)); err != nil {
		return err
	}
	return projections.Exec(db.NewRaw(`INSERT INTO news_item_copies (item_id, feed_id, organization_id, news_page_id, attachment_id,
			source_id, source_type, url, title, decided_by, similarity, found_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (item_id, news_page_id) DO NOTHING`,
		e.ItemID, e.FeedID, e.OrganizationID, e.NewsPageID, e.AttachmentID, e.SourceID, string(e.SourceType),
		e.Content.URL, e.Content.Title, e.By, e.Similarity, e.At).Exec(ctx))
}

func projectHappeningCopy(ctx context.Context, db bun.IDB, e domain.HappeningItemCopyFound) error {
	return projections.Exec(db.NewRaw(`INSERT INTO event_item_copies (item_id, feed_id, organization_id, copy_event_id, attachment_id,
			source_id, source_type, url, title, found_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (item_id, copy_event_id) DO NOTHING`,
		e.ItemID, e.FeedID, e.OrganizationID, e.CopyID, e.AttachmentID, e.SourceID, string(e.SourceType), e.URL, e.Title, e.At).Exec(ctx))
}

// projectHappeningSplit forgets an event item's copy; the item it became
// (EventItemAdded in its own stream) is listed as any item.
func projectHappeningSplit(ctx context.Context, db bun.IDB, e domain.HappeningItemCopySplit) error {
	return projections.Exec(db.NewRaw(`DELETE FROM event_item_copies WHERE item_id = ? AND copy_event_id = ?`, e.ItemID, e.CopyID).Exec(ctx))
}

// projectSplit forgets the copy; the item it became (NewsItemAdded in its
// own stream) indexes itself.
func projectSplit(ctx context.Context, db bun.IDB, e domain.NewsItemCopySplit) error {
	res, err := db.NewRaw(`DELETE FROM news_copy_index WHERE feed_id = ? AND news_page_id = ? AND item_news_page_id = ?`,
		e.FeedID, e.NewsPageID, e.ItemNewsPageID).Exec(ctx)
	if err != nil {
		return projections.Exec(nil, err)
	}
	if n, _ := res.RowsAffected(); n > 0 {
		if err := projections.Exec(db.NewRaw(`DELETE FROM news_copy_bands WHERE feed_id = ? AND news_page_id = ?`, e.FeedID, e.NewsPageID).Exec(ctx)); err != nil {
			return err
		}
	}
	return projections.Exec(db.NewRaw(`DELETE FROM news_item_copies WHERE item_id = ? AND news_page_id = ?`, e.ItemID, e.NewsPageID).Exec(ctx))
}

// effectiveAt is when the article counts as published for the copy window.
func effectiveAt(c domain.ArticleContent, added time.Time) time.Time {
	if c.PublishedAt != nil {
		return *c.PublishedAt
	}
	return added
}

func index(ctx context.Context, db bun.IDB, feedID, newsPageID, itemNewsPageID uuid.UUID, c domain.ArticleContent, at time.Time) error {
	sig, bands := "", []int64(nil)
	if c.Signature != nil {
		sig, bands = c.Signature.String(), c.Signature.Bands(feedID[:])
	}
	if err := projections.Exec(db.NewRaw(`INSERT INTO news_copy_index (feed_id, news_page_id, item_news_page_id, address, title, signature, effective_at)
		VALUES (?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (feed_id, news_page_id) DO UPDATE SET item_news_page_id = EXCLUDED.item_news_page_id`,
		feedID, newsPageID, itemNewsPageID, nearcopy.NormalAddress(c.URL), c.Title, sig, at).Exec(ctx)); err != nil {
		return err
	}
	if len(bands) == 0 {
		return nil
	}
	return projections.Exec(db.NewRaw(`INSERT INTO news_copy_bands (band, feed_id, news_page_id)
		SELECT unnest(?::bigint[]), ?, ? ON CONFLICT DO NOTHING`, pgdialect.Array(bands), feedID, newsPageID).Exec(ctx))
}
