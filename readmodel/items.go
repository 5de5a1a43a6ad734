package readmodel

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/feedsvc/feedsvc/commands"
	"github.com/feedsvc/feedsvc/domain"
)

// NewsItem is a row of news_items: one article in one feed.
type NewsItem struct {
	bun.BaseModel `bun:"table:news_items"`

	ID             uuid.UUID  `bun:"id,pk,type:uuid"`
	FeedID         uuid.UUID  `bun:"feed_id,type:uuid"`
	OrganizationID uuid.UUID  `bun:"organization_id,type:uuid"`
	NewsPageID     uuid.UUID  `bun:"news_page_id,type:uuid"`
	VersionID      uuid.UUID  `bun:"version_id,type:uuid"`
	SourceID       uuid.UUID  `bun:"source_id,type:uuid"`
	AttachmentID   uuid.UUID  `bun:"attachment_id,type:uuid"`
	SourceType     string     `bun:"source_type"`
	URL            string     `bun:"url"`
	Title          string     `bun:"title"`
	Description    string     `bun:"description"`
	ImageURL       string     `bun:"image_url"`
	PublishedAt    *time.Time `bun:"published_at"`
	CreatedAt      time.Time  `bun:"created_at"`
	UpdatedAt      time.Time  `bun:"updated_at"`
}

// ItemFilter selects a page of a feed's items.
type ItemFilter struct {
	Limit  int
	Offset int
	Since  *time.Time
	Until  *time.Time
}

// ItemPage is a page of items and how many match in all.
type ItemPage struct {
	Items []NewsItem
	Total int
}

// NewsItems pages through a feed's items, newest first (D7). The feed must
// be the organization's.
func (q *Queries) NewsItems(ctx context.Context, org, feedID uuid.UUID, f ItemFilter) (ItemPage, error) {
	if _, err := q.NewsFeed(ctx, org, feedID); err != nil {
		return ItemPage{}, err
	}
	items := []NewsItem{}
	sel := q.db.NewSelect().Model(&items).Where("feed_id = ?", feedID)
	applyRange(sel, f)
	err := sel.OrderExpr("created_at DESC, published_at DESC NULLS LAST, id DESC").
		Limit(int64(f.Limit)).Offset(int64(f.Offset)).Scan(ctx)
	if err != nil {
		return ItemPage{}, fmt.Errorf("list items of feed %s: %w", feedID, err)
	}
	total, err := q.countItems(ctx, feedID, f)
	if err != nil {
		return ItemPage{}, err
	}
	return ItemPage{Items: items, Total: total}, nil
}

// countItems reads the projected count when no date filter applies, so a
// large feed's first page does not count 100,000 rows on every request.
func (q *Queries) countItems(ctx context.Context, feedID uuid.UUID, f ItemFilter) (int, error) {
	if f.Since == nil && f.Until == nil {
		var n int
		err := q.db.NewRaw("SELECT coalesce((SELECT items FROM news_feed_item_counts WHERE feed_id = ?), 0)", feedID).Scan(ctx, &n)
		if err != nil {
			return 0, fmt.Errorf("count items of feed %s: %w", feedID, err)
		}
		return n, nil
	}
	sel := q.db.NewSelect().Model((*NewsItem)(nil)).Where("feed_id = ?", feedID)
	applyRange(sel, f)
	n, err := sel.Count(ctx)
	if err != nil {
		return 0, fmt.Errorf("count items of feed %s: %w", feedID, err)
	}
	return int(n), nil
}

func applyRange(sel *bun.SelectQuery, f ItemFilter) {
	if f.Since != nil {
		sel.Where("created_at > ?", *f.Since)
	}
	if f.Until != nil {
		sel.Where("created_at < ?", *f.Until)
	}
}

// NewsItem returns one item of an organization's feed.
func (q *Queries) NewsItem(ctx context.Context, org, feedID, itemID uuid.UUID) (NewsItem, error) {
	if _, err := q.NewsFeed(ctx, org, feedID); err != nil {
		return NewsItem{}, err
	}
	var it NewsItem
	err := q.db.NewSelect().Model(&it).Where("id = ? AND feed_id = ?", itemID, feedID).Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		return NewsItem{}, &domain.NotFoundError{Resource: "item", ID: itemID.String()}
	}
	if err != nil {
		return NewsItem{}, fmt.Errorf("get item %s: %w", itemID, err)
	}
	return it, nil
}

// NewsItemRef implements commands.ItemLookup.
func (q *Queries) NewsItemRef(ctx context.Context, org, feedID, itemID uuid.UUID) (commands.ItemRef, error) {
	it, err := q.NewsItem(ctx, org, feedID, itemID)
	if err != nil {
		return commands.ItemRef{}, err
	}
	return commands.ItemRef{FeedID: it.FeedID, NewsPageID: it.NewsPageID, SourceID: it.SourceID}, nil
}

// FeedbackCounts are the ratings given within a scope.
type FeedbackCounts struct {
	Positive int64 `bun:"positive"`
	Negative int64 `bun:"negative"`
	Neutral  int64 `bun:"neutral"`
}

// Feedback scopes: counts are kept per item, per feed and per source record.
const (
	FeedbackScopeItem   = "item"
	FeedbackScopeFeed   = "feed"
	FeedbackScopeSource = "source"
)

// FeedbackCounts returns the counts of one scope; zero when none.
func (q *Queries) FeedbackCounts(ctx context.Context, scope string, id uuid.UUID) (FeedbackCounts, error) {
	var c FeedbackCounts
	err := q.db.NewRaw("SELECT positive, negative, neutral FROM feedback_counts WHERE scope = ? AND scope_id = ?", scope, id).
		Scan(ctx, &c.Positive, &c.Negative, &c.Neutral)
	if errors.Is(err, sql.ErrNoRows) {
		return FeedbackCounts{}, nil
	}
	if err != nil {
		return FeedbackCounts{}, fmt.Errorf("feedback counts of %s %s: %w", scope, id, err)
	}
	return c, nil
}
