package copies_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/readmodel/copies"
	"github.com/feedsvc/feedsvc/testkit/testdb"
)

// A batch's index rows written at its end must leave what one upsert per
// event left, whose conflict changes only the item a page is a copy of: a
// page indexed twice in one batch (an item, then a copy of another item
// after its title changed) keeps its first row and the last item named.
func TestAPageIndexedTwiceInABatchIsWhatTwoUpsertsLeft(t *testing.T) {
	db, _ := testdb.New(t)
	ctx := context.Background()
	at := time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC)
	page, other := uuid.New(), uuid.New()
	rows := func(feed uuid.UUID) []copies.IndexRow {
		return []copies.IndexRow{
			{FeedID: feed, NewsPageID: page, ItemNewsPageID: page, Address: "example.com/a", Title: "first", Signature: "s1", At: at, Bands: []int64{1, 2}},
			{FeedID: feed, NewsPageID: page, ItemNewsPageID: other, Address: "example.com/a", Title: "second", Signature: "s2", At: at.Add(time.Hour), Bands: []int64{2, 3}},
		}
	}
	perEvent, batched := uuid.New(), uuid.New()
	for _, r := range rows(perEvent) {
		if err := copies.FlushIndexRows(ctx, db.Bun, []copies.IndexRow{r}); err != nil {
			t.Fatal(err)
		}
	}
	if err := copies.FlushIndexRows(ctx, db.Bun, rows(batched)); err != nil {
		t.Fatal(err)
	}
	type got struct {
		Item       uuid.UUID
		Title, Sig string
		At         time.Time
		Bands      int
	}
	read := func(feed uuid.UUID) got {
		t.Helper()
		var g got
		err := db.Pool.QueryRow(ctx, `SELECT item_news_page_id, title, signature, effective_at,
			(SELECT count(*) FROM news_copy_bands b WHERE b.feed_id = i.feed_id AND b.news_page_id = i.news_page_id)
			FROM news_copy_index i WHERE feed_id = $1 AND news_page_id = $2`, feed, page).Scan(&g.Item, &g.Title, &g.Sig, &g.At, &g.Bands)
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	want := read(perEvent)
	if want.Item != other || want.Title != "first" || want.Bands != 3 {
		t.Fatalf("per event: %+v; want the first row naming the second item, with three bands", want)
	}
	if g := read(batched); g.Item != want.Item || g.Title != want.Title || g.Sig != want.Sig || !g.At.Equal(want.At) || g.Bands != want.Bands {
		t.Fatalf("batched: %+v; want what the upserts per event left, %+v", g, want)
	}
}
