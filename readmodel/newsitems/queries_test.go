package newsitems_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/domain/search"
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

// A search's page is read by walking the list's order index when matches
// are dense and from the words index when they are rare; both give the
// list's order and the exact total, by offset too.
func TestASearchPagesTheSameWhetherItsMatchesAreDenseOrRare(t *testing.T) {
	db, _ := testdb.New(t)
	ctx := context.Background()
	org, feed := uuid.New(), uuid.New()
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	if _, err := db.Bun.NewInsert().Model(&feeds.Feed{Kind: domain.FeedNews,
		ID: feed, OrganizationID: org, Name: "f", Enabled: true, CreatedAt: base, UpdatedAt: base,
	}).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	const n = 1200
	rows := make([]newsitems.NewsItem, 0, n)
	for i := range n {
		title := fmt.Sprintf("item %d", i)
		if i%2 == 0 {
			title += " climate"
		}
		if i%150 == 7 {
			title += " volcanoes"
		}
		at := base.Add(time.Duration(i/3) * time.Minute) // ties, so id breaks them
		rows = append(rows, newsitems.NewsItem{
			ID: uuid.New(), FeedID: feed, OrganizationID: org, NewsPageID: uuid.New(), VersionID: uuid.New(),
			SourceID: uuid.New(), AttachmentID: uuid.New(), SourceType: "site", URL: fmt.Sprintf("https://example.com/%d", i),
			Title: title, CreatedAt: at, UpdatedAt: at, Language: "en",
		})
	}
	if _, err := db.Bun.NewInsert().Model(&rows).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	// The words as the projector writes them.
	if _, err := db.Bun.ExecContext(ctx, `UPDATE news_items SET search = feedsvc_news_search(language, title, description, NULL)`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Bun.ExecContext(ctx, "INSERT INTO news_feed_item_counts (feed_id, items) VALUES (?, ?)", feed, n); err != nil {
		t.Fatal(err)
	}
	q := newsitems.NewQueries(db.Bun)
	// walkFinds: a page ending at upTo walks when upTo * 1,200 <= 5,000 *
	// matches: always for the 600 dense matches here, never for 8 matches
	// and pages of 50.
	for _, tc := range []struct {
		name, query, word string
		limit             int
		offsets           []int
	}{
		{"dense: half the items, walked", "climate", "climate", 5, []int{0, 3, 590, 601}},
		{"rare: eight items, a stemmed form, from the index", "volcano", "volcanoes", 50, []int{0, 3, 9}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var want []uuid.UUID
			if err := db.Bun.NewSelect().Model((*newsitems.NewsItem)(nil)).Column("id").Where("feed_id = ? AND title LIKE ?", feed, "%"+tc.word+"%").
				OrderExpr("created_at DESC, published_at DESC NULLS LAST, id DESC").Scan(ctx, &want); err != nil {
				t.Fatal(err)
			}
			parsed, err := search.Parse(tc.query)
			if err != nil {
				t.Fatal(err)
			}
			if len(want) != map[bool]int{true: 600, false: 8}[tc.word == "climate"] {
				t.Fatalf("%d items say %s", len(want), tc.word)
			}
			for _, offset := range tc.offsets {
				page, err := q.NewsItems(ctx, org, feed, newsitems.ItemFilter{Limit: tc.limit, Offset: offset, Query: parsed})
				if err != nil {
					t.Fatal(err)
				}
				if page.Total != len(want) {
					t.Errorf("offset %d: total %d, want %d", offset, page.Total, len(want))
				}
				exp := want[min(offset, len(want)):min(offset+tc.limit, len(want))]
				got := make([]uuid.UUID, len(page.Items))
				for i, it := range page.Items {
					got[i] = it.ID
				}
				if !slices.Equal(got, exp) {
					t.Errorf("offset %d: page %v, want %v", offset, got, exp)
				}
			}
		})
	}
}
