package commands_test

import (
	"context"
	"testing"

	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/commands"
	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/eventstore"
)

func TestArticlesAndItemsRecordedTogetherCommitOnceAndKeepEachDecision(t *testing.T) {
	for name, newStore := range stores {
		t.Run(name, func(t *testing.T) { recordedTogether(t, newStore) })
	}
}

func recordedTogether(t *testing.T, newStore func(*testing.T) (*commands.Handler, eventstore.Store)) {
	h, store := newStore(t)
	ctx := context.Background()
	src, other := uuid.New(), uuid.New()
	known, _, err := h.DiscoverArticle(ctx, commands.DiscoverArticle{SourceID: other, Content: domain.ArticleContent{URL: "https://e.com/known", Title: "k"}})
	if err != nil {
		t.Fatal(err)
	}
	found := func(url string) commands.DiscoverArticle {
		return commands.DiscoverArticle{SourceID: src, Content: domain.ArticleContent{URL: url, Title: url}}
	}
	got, res, err := h.DiscoverArticles(ctx, []commands.DiscoverArticle{
		found("https://e.com/1"),
		found("https://e.com/known"), // known through another source: linked, not new
		found("https://e.com/2"),
		found("https://E.com/2#again"), // the same article twice in one batch
	})
	if err != nil {
		t.Fatalf("discover articles: %v", err)
	}
	wantNew := []bool{true, false, true, false}
	for i, d := range got {
		if d.New != wantNew[i] {
			t.Errorf("article %d: new %v, want %v", i, d.New, wantNew[i])
		}
	}
	if got[1].NewsPageID != known.NewsPageID || got[3].NewsPageID != got[2].NewsPageID {
		t.Errorf("known or repeated articles got new ids: %v", got)
	}
	if len(res.EventTypes) != 3 {
		t.Errorf("event types %v, want two discoveries and one source link", res.EventTypes)
	}
	// The first round's streams differ, so their events commit together;
	// the repeated article is decided after them (and appends nothing).
	commits := commitsOf(t, store, domain.ArticleStream("https://e.com/1"), domain.ArticleStream("https://e.com/known"), domain.ArticleStream("https://e.com/2"))
	if len(commits) != 1 {
		t.Errorf("the batch's article events commit in %d commits %v, want 1", len(commits), commits)
	}

	feed, org := uuid.New(), uuid.New()
	item := func(a commands.Discovered) commands.AddNewsItem {
		return commands.AddNewsItem{ItemTarget: domain.ItemTarget{FeedID: feed, OrganizationID: org, SourceID: src, SourceType: domain.SourceSite}, Article: a.ArticleDiscovered}
	}
	if _, _, err := h.AddNewsItem(ctx, item(got[1])); err != nil {
		t.Fatal(err)
	}
	added, _, err := h.AddNewsItems(ctx, []commands.AddNewsItem{item(got[0]), item(got[1]), item(got[2])})
	if err != nil {
		t.Fatalf("add news items: %v", err)
	}
	if !added[0] || added[1] || !added[2] {
		t.Errorf("added %v, want the feed's existing item left alone and the others added", added)
	}
	commits = commitsOf(t, store, domain.NewsItemStream(feed, got[0].NewsPageID), domain.NewsItemStream(feed, got[2].NewsPageID))
	if len(commits) != 1 {
		t.Errorf("the new items commit in %d commits, want 1", len(commits))
	}
}

// commitsOf returns the distinct commit positions of the streams' last
// events.
func commitsOf(t *testing.T, store eventstore.Store, streams ...string) map[uint64]bool {
	t.Helper()
	out := map[uint64]bool{}
	for _, s := range streams {
		events, err := store.ReadStream(context.Background(), s, 0, 0)
		if err != nil {
			t.Fatalf("read %s: %v", s, err)
		}
		out[events[len(events)-1].Position.Commit] = true
	}
	return out
}
