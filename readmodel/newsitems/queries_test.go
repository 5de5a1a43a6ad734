package newsitems_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/readmodel/feeds"
	"github.com/feedsvc/feedsvc/readmodel/newsitems"
	"github.com/feedsvc/feedsvc/testkit/testdb"
)

// Shallow and deep pages take different queries; both must give the order
// of D7 (created_at, then published_at with nulls last, then id, all
// descending) and agree where they meet.
func TestItemPagesAgreeOnBothSidesOfTheDeepOffsetSwitch(t *testing.T) {
	db, _ := testdb.New(t)
	ctx := context.Background()
	org, feed, other := uuid.New(), uuid.New(), uuid.New()
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	if _, err := db.Bun.NewInsert().Model(&feeds.Feed{Kind: domain.FeedNews,
		ID: feed, OrganizationID: org, Name: "f", Enabled: true, CreatedAt: base, UpdatedAt: base,
	}).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	const n = 1200
	rows := make([]newsitems.NewsItem, 0, n+10)
	for i := range n {
		// Runs of equal created_at, some without published_at, so that
		// every tie-breaker matters.
		at := base.Add(time.Duration(i/4) * time.Minute)
		var pub *time.Time
		if i%3 != 0 {
			p := at.Add(-time.Duration(i%5) * time.Second)
			pub = &p
		}
		rows = append(rows, newsitems.NewsItem{
			ID: uuid.New(), FeedID: feed, OrganizationID: org, NewsPageID: uuid.New(), VersionID: uuid.New(),
			SourceID: uuid.New(), AttachmentID: uuid.New(), SourceType: "site",
			URL: fmt.Sprintf("https://example.com/%d", i), Title: fmt.Sprint(i), PublishedAt: pub, CreatedAt: at, UpdatedAt: at,
		})
	}
	for i := range 10 { // another feed's items never show up
		rows = append(rows, newsitems.NewsItem{
			ID: uuid.New(), FeedID: other, OrganizationID: org, NewsPageID: uuid.New(), VersionID: uuid.New(),
			SourceID: uuid.New(), AttachmentID: uuid.New(), SourceType: "site", URL: "https://example.com/x",
			CreatedAt: base.Add(time.Duration(i) * time.Minute), UpdatedAt: base,
		})
	}
	if _, err := db.Bun.NewInsert().Model(&rows).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Bun.ExecContext(ctx, "INSERT INTO news_feed_item_counts (feed_id, items) VALUES (?, ?)", feed, n); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Bun.ExecContext(ctx, "VACUUM ANALYZE news_items"); err != nil {
		t.Fatal(err)
	}

	var want []uuid.UUID
	if err := db.Bun.NewSelect().Model((*newsitems.NewsItem)(nil)).Column("id").Where("feed_id = ?", feed).
		OrderExpr("created_at DESC, published_at DESC NULLS LAST, id DESC").Scan(ctx, &want); err != nil {
		t.Fatal(err)
	}
	since := base.Add(100 * time.Minute)
	var wantSince []uuid.UUID
	if err := db.Bun.NewSelect().Model((*newsitems.NewsItem)(nil)).Column("id").Where("feed_id = ? AND created_at > ?", feed, since).
		OrderExpr("created_at DESC, published_at DESC NULLS LAST, id DESC").Scan(ctx, &wantSince); err != nil {
		t.Fatal(err)
	}

	q := newsitems.NewQueries(db.Bun)
	for _, tc := range []struct {
		filter newsitems.ItemFilter
		all    []uuid.UUID
	}{
		{newsitems.ItemFilter{Limit: 50, Offset: 0}, want},
		{newsitems.ItemFilter{Limit: 50, Offset: 470}, want},
		{newsitems.ItemFilter{Limit: 50, Offset: 499}, want},
		{newsitems.ItemFilter{Limit: 50, Offset: 500}, want},
		{newsitems.ItemFilter{Limit: 100, Offset: 1150}, want},
		{newsitems.ItemFilter{Limit: 10, Offset: n + 5}, want},
		{newsitems.ItemFilter{Limit: 50, Offset: 480, Since: &since}, wantSince},
		{newsitems.ItemFilter{Limit: 50, Offset: 900, Since: &since}, wantSince},
	} {
		page, err := q.NewsItems(ctx, org, feed, tc.filter)
		if err != nil {
			t.Fatal(err)
		}
		lo, hi := min(tc.filter.Offset, len(tc.all)), min(tc.filter.Offset+tc.filter.Limit, len(tc.all))
		exp := tc.all[lo:hi]
		if len(page.Items) != len(exp) {
			t.Fatalf("offset %d since %v: %d items, want %d", tc.filter.Offset, tc.filter.Since != nil, len(page.Items), len(exp))
		}
		for i, it := range page.Items {
			if it.ID != exp[i] {
				t.Fatalf("offset %d since %v: item %d is %s (%s), want %s", tc.filter.Offset, tc.filter.Since != nil, i, it.ID, it.Title, exp[i])
			}
			if it.URL == "" || it.FeedID != feed {
				t.Fatalf("offset %d: item %d not fully read: %+v", tc.filter.Offset, i, it)
			}
		}
		if page.Total != len(tc.all) {
			t.Fatalf("offset %d since %v: total %d, want %d", tc.filter.Offset, tc.filter.Since != nil, page.Total, len(tc.all))
		}
	}

	// Another organization sees neither the items nor the feed.
	var nf *domain.NotFoundError
	for _, f := range []newsitems.ItemFilter{{Limit: 50}, {Limit: 50, Offset: 600}, {Limit: 50, Since: &since}} {
		if _, err := q.NewsItems(ctx, uuid.New(), feed, f); !errors.As(err, &nf) {
			t.Fatalf("another organization's read: %v, want not found", err)
		}
	}
}
