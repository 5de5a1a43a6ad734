package commands_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/commands"
	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/eventstore"
	"github.com/feedsvc/feedsvc/internal/testdb"
	"github.com/feedsvc/feedsvc/readmodel"
)

func setup(t *testing.T) (*commands.Handler, *eventstore.Postgres) {
	t.Helper()
	db, _ := testdb.New(t)
	store := eventstore.NewPostgres(db.Pool)
	return commands.New(store, readmodel.NewQueries(db.Bun)), store
}

func TestConcurrentUpdatesOfOneFeedAllLandThroughRetries(t *testing.T) {
	h, store := setup(t)
	ctx := context.Background()
	org := uuid.New()
	id, _, err := h.CreateNewsFeed(ctx, commands.CreateNewsFeed{Org: org, Name: "n", Description: "d"})
	if err != nil {
		t.Fatal(err)
	}
	const writers = 4
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for i := 0; i < writers; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			name := fmt.Sprintf("name %d", i)
			_, err := h.UpdateNewsFeed(ctx, commands.UpdateNewsFeed{Org: org, FeedID: id, Update: domain.FeedUpdate{Name: &name}})
			errs <- err
		}(i)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("a concurrent update failed instead of retrying: %v", err)
		}
	}
	events, err := store.ReadStream(ctx, domain.NewsFeedStream(id), 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	if len(events) != 1+writers {
		t.Fatalf("%d events in the feed stream, want %d (one per update)", len(events), 1+writers)
	}
}

func TestConcurrentAttachesOfOneSourceLeaveExactlyOneAttachment(t *testing.T) {
	h, _ := setup(t)
	ctx := context.Background()
	org := uuid.New()
	id, _, err := h.CreateNewsFeed(ctx, commands.CreateNewsFeed{Org: org, Name: "n", Description: "d"})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var ok, conflicts int
	for i := 0; i < 6; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d := "Example.com"
			_, _, err := h.AttachNewsSource(ctx, commands.AttachNewsSource{Org: org, FeedID: id, Request: domain.SourceRequest{SourceType: "site", Domain: &d}})
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				ok++
			case errors.Is(err, domain.ErrConflict):
				conflicts++
			default:
				t.Errorf("unexpected error: %v", err)
			}
		}()
	}
	wg.Wait()
	if ok != 1 || conflicts != 5 {
		t.Fatalf("%d attached and %d conflicts, want 1 and 5", ok, conflicts)
	}
	feed, err := h.LoadNewsFeed(ctx, org, id)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(feed.Attachments()); n != 1 {
		t.Fatalf("%d attachments, want 1", n)
	}
}

func TestRegisteringTheSameIdentityTwiceReusesTheRecord(t *testing.T) {
	h, _ := setup(t)
	ctx := context.Background()
	a, b := uuid.New(), uuid.New()
	d := "example.com"
	first, created, _, err := h.RegisterSource(ctx, commands.RegisterSource{Org: a, Request: domain.SourceRequest{SourceType: "site", Domain: &d}})
	if err != nil || !created {
		t.Fatalf("first register: created %v err %v", created, err)
	}
	d2 := "HTTPS://EXAMPLE.COM/"
	second, created, res, err := h.RegisterSource(ctx, commands.RegisterSource{Org: b, Request: domain.SourceRequest{SourceType: "site", Domain: &d2}})
	if err != nil || created {
		t.Fatalf("second register: created %v err %v", created, err)
	}
	if first.ID() != second.ID() || !second.LinkedTo(a) || !second.LinkedTo(b) {
		t.Fatalf("records %s / %s; linked a=%v b=%v", first.ID(), second.ID(), second.LinkedTo(a), second.LinkedTo(b))
	}
	if len(res.EventTypes) != 1 || res.EventTypes[0] != "SourceLinkedToOrganization" {
		t.Fatalf("second register appended %v", res.EventTypes)
	}
	_, _, res, err = h.RegisterSource(ctx, commands.RegisterSource{Org: b, Request: domain.SourceRequest{SourceType: "site", Domain: &d}})
	if err != nil || !res.Empty() {
		t.Fatalf("a third register by a linked organization appended %v (err %v); want nothing", res.EventTypes, err)
	}
}

func TestAnItemIsAddedToAFeedOnce(t *testing.T) {
	h, _ := setup(t)
	ctx := context.Background()
	src := uuid.New()
	d, _, err := h.DiscoverArticle(ctx, commands.DiscoverArticle{SourceID: src, Content: domain.ArticleContent{URL: "https://e.com/a"}})
	if err != nil {
		t.Fatal(err)
	}
	again, _, err := h.DiscoverArticle(ctx, commands.DiscoverArticle{SourceID: uuid.New(), Content: domain.ArticleContent{URL: "https://E.com/a#top"}})
	if err != nil || again.NewsPageID != d.NewsPageID || again.New {
		t.Fatalf("rediscovery: %v %+v; want the same newsPageId", err, again)
	}
	feed := uuid.New()
	for i, want := range []bool{true, false} {
		added, _, err := h.AddNewsItem(ctx, commands.AddNewsItem{FeedID: feed, OrganizationID: uuid.New(), SourceID: src, SourceType: domain.SourceSite, Article: d.ArticleDiscovered})
		if err != nil || added != want {
			t.Fatalf("add #%d: added %v err %v, want %v", i+1, added, err, want)
		}
	}
}

func TestCommandsOnAnotherOrganizationsFeedAnswerNotFound(t *testing.T) {
	h, _ := setup(t)
	ctx := context.Background()
	id, _, err := h.CreateNewsFeed(ctx, commands.CreateNewsFeed{Org: uuid.New(), Name: "n", Description: "d"})
	if err != nil {
		t.Fatal(err)
	}
	stranger := uuid.New()
	name := "mine now"
	if _, err := h.UpdateNewsFeed(ctx, commands.UpdateNewsFeed{Org: stranger, FeedID: id, Update: domain.FeedUpdate{Name: &name}}); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("update by another organization: %v", err)
	}
	if _, err := h.DeleteNewsFeed(ctx, commands.DeleteNewsFeed{Org: stranger, FeedID: id}); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("delete by another organization: %v", err)
	}
}
