package http_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/eventstore"
)

// appendItem stores an item added at a chosen moment, as the crawler would,
// and waits for the projections.
func (f *itemFixture) appendItem(t *testing.T, id uuid.UUID, sourceType domain.SourceType, at time.Time, published *time.Time) {
	t.Helper()
	ctx := context.Background()
	page := uuid.New()
	e := domain.NewsItemAdded{
		ItemID: id, FeedID: uuid.MustParse(f.feedID), OrganizationID: f.orgOf(t), AttachmentID: uuid.New(),
		SourceID: uuid.New(), SourceType: sourceType, NewsPageID: page, VersionID: uuid.New(),
		Content: domain.ArticleContent{URL: "https://news.example/" + id.String(), Title: "t", PublishedAt: published}, At: at,
	}
	data, err := domain.EncodeEvent(e)
	if err != nil {
		t.Fatal(err)
	}
	res, err := f.h.Service.Store.AppendToStream(ctx, domain.NewsItemStream(e.FeedID, page), eventstore.NoStream(),
		eventstore.EventData{ID: uuid.New(), Type: e.EventType(), Data: data})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.h.Service.Waiter.Wait(ctx, res.Position, []string{e.EventType()}); err != nil {
		t.Fatal(err)
	}
}

func TestItemsAddedTogetherAreOrderedByPublishTimeThenId(t *testing.T) {
	t.Parallel()
	f := newItemFixture(t)
	at := time.Date(2026, 11, 21, 9, 0, 0, 0, time.UTC)
	pub := func(h int) *time.Time { p := at.Add(-time.Duration(h) * time.Hour); return &p }
	low, high := uuid.MustParse("00000000-0000-7000-8000-000000000001"), uuid.MustParse("00000000-0000-7000-8000-000000000002")
	undated, older, newer := uuid.New(), uuid.New(), uuid.New()
	f.appendItem(t, undated, domain.SourceSite, at, nil)
	f.appendItem(t, low, domain.SourceSite, at, pub(5))
	f.appendItem(t, older, domain.SourceSite, at, pub(3))
	f.appendItem(t, high, domain.SourceSite, at, pub(5))
	f.appendItem(t, newer, domain.SourceSite, at, pub(1))
	later := uuid.New()
	f.appendItem(t, later, domain.SourceSite, at.Add(time.Millisecond), pub(48))

	// D7: createdAt descending, then publishedAt descending (undated last),
	// then id descending.
	want := []uuid.UUID{later, newer, older, high, low, undated}
	items := f.h.Do("GET", "/feeds/news/"+f.feedID+"/items", nil).MustStatus(t, 200).Data()["items"].([]any)
	if len(items) != len(want) {
		t.Fatalf("%d items, want %d", len(items), len(want))
	}
	for i, it := range items {
		if got := it.(map[string]any)["id"]; got != want[i].String() {
			t.Fatalf("position %d holds %v, want %s", i, got, want[i])
		}
	}
}

func TestItemsFromSitemapAndIndexPageSourcesAreSiteItemsInBothShapes(t *testing.T) {
	t.Parallel()
	f := newItemFixture(t)
	at := time.Date(2026, 11, 21, 9, 0, 0, 0, time.UTC)
	f.appendItem(t, uuid.New(), domain.SourceSitemap, at, nil)
	f.appendItem(t, uuid.New(), domain.SourceSiteIndexPage, at.Add(time.Millisecond), nil)
	for _, it := range f.h.Do("GET", "/v0/feeds/news/"+f.feedID+"/items", nil).MustStatus(t, 200).Data()["items"].([]any) {
		if typ := it.(map[string]any)["type"]; typ != "site" {
			t.Fatalf("v0 type %v, want site (api.md 2.5)", typ)
		}
	}
	for _, it := range f.h.Do("GET", "/feeds/news/"+f.feedID+"/items?include=source", nil).MustStatus(t, 200).Data()["items"].([]any) {
		if typ := it.(map[string]any)["source"].(map[string]any)["type"]; typ != "site" {
			t.Fatalf("source.type %v, want site", typ)
		}
	}
}

func TestTheItemsOfADeletedFeedAnswer404ForTheFeed(t *testing.T) {
	t.Parallel()
	f := newItemFixture(t, full(1))
	f.h.Do("DELETE", "/feeds/news/"+f.feedID, nil).MustStatus(t, 200)
	for _, r := range []struct{ method, path string }{
		{"GET", "/feeds/news/" + f.feedID + "/items/" + f.items[0]},
		{"POST", "/feeds/news/" + f.feedID + "/items/" + f.items[0] + "/feedback"},
		{"GET", "/feeds/news/" + f.feedID + "/items"},
	} {
		var body any
		if r.method == "POST" {
			body = map[string]string{"rating": "positive"}
		}
		resp := f.h.Do(r.method, r.path, body).MustStatus(t, 404)
		if e := resp.Body["error"].(map[string]any); e["resource"] != "feed" || e["id"] != f.feedID {
			t.Fatalf("%s %s: error %v, want the feed named", r.method, r.path, e)
		}
	}
}

func TestAFeedbackCommentWithANulCharacterAnswers400(t *testing.T) {
	t.Parallel()
	f := newItemFixture(t, full(1))
	r := f.h.Do("POST", "/feeds/news/"+f.feedID+"/items/"+f.items[0]+"/feedback", `{"rating":"neutral","comment":"a\u0000b"}`).MustStatus(t, 400)
	if field := r.Body["error"].(map[string]any)["details"].(map[string]any)["field"]; field != "comment" {
		t.Fatalf("field %v, want comment", field)
	}
}
