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
	"github.com/feedsvc/feedsvc/readmodel"
	"github.com/feedsvc/feedsvc/testkit/testdb"
)

func setup(t *testing.T) (*commands.Handler, eventstore.Store) {
	t.Helper()
	db, _ := testdb.New(t)
	store := eventstore.NewPostgres(db.Pool)
	return commands.New(store, readmodel.NewLookups(db.Bun)), store
}

// inMemory runs commands that need no read-model lookups on the in-memory
// store: the decide loop must hold on every Store.
func inMemory(t *testing.T) (*commands.Handler, eventstore.Store) {
	t.Helper()
	store := eventstore.NewMemory()
	return commands.New(store, nil), store
}

// stores are the stores the lookup-free command tests run on.
var stores = map[string]func(*testing.T) (*commands.Handler, eventstore.Store){"postgres": setup, "memory": inMemory}

func TestConcurrentUpdatesOfOneFeedAllLandThroughRetries(t *testing.T) {
	for name, newStore := range stores {
		t.Run(name, func(t *testing.T) { concurrentUpdatesAllLand(t, newStore) })
	}
}

func concurrentUpdatesAllLand(t *testing.T, newStore func(*testing.T) (*commands.Handler, eventstore.Store)) {
	h, store := newStore(t)
	ctx := context.Background()
	org := uuid.New()
	f, _, err := h.CreateFeed(ctx, commands.CreateFeed{Kind: domain.FeedNews, Org: org, Name: "n", Description: "d"})
	id := f.ID
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
			_, _, err := h.UpdateFeed(ctx, commands.UpdateFeed{FeedRef: commands.FeedRef{Kind: domain.FeedNews, Org: org, FeedID: id}, Update: domain.FeedUpdate{Name: &name}})
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
	events, err := store.ReadStream(ctx, domain.FeedStream(domain.FeedNews, id), 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	if len(events) != 1+writers {
		t.Fatalf("%d events in the feed stream, want %d (one per update)", len(events), 1+writers)
	}
}

func TestConcurrentAttachesOfOneSourceLeaveExactlyOneAttachment(t *testing.T) {
	h, store := setup(t)
	ctx := context.Background()
	org := uuid.New()
	f, _, err := h.CreateFeed(ctx, commands.CreateFeed{Kind: domain.FeedNews, Org: org, Name: "n", Description: "d"})
	id := f.ID
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
			_, _, err := h.AttachSource(ctx, commands.AttachSource{FeedRef: commands.FeedRef{Kind: domain.FeedNews, Org: org, FeedID: id}, Request: domain.SourceRequest{SourceType: "site", Domain: &d}})
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
	events, err := store.ReadStream(ctx, domain.FeedStream(domain.FeedNews, id), 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range events {
		if e.Type == "NewsSourceAttached" {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("%d attachments, want 1", n)
	}
}

func TestRegisteringTheSameIdentityTwiceReusesTheRecord(t *testing.T) {
	h, _ := setup(t)
	ctx := context.Background()
	a, b := uuid.New(), uuid.New()
	d := "example.com"
	first, _, err := h.RegisterSource(ctx, commands.RegisterSource{Org: a, Request: domain.SourceRequest{SourceType: "site", Domain: &d}})
	if err != nil || !first.Created {
		t.Fatalf("first register: created %v err %v", first.Created, err)
	}
	// Another organization registering the identity links the one record;
	// for that organization it is its first registration (its own view).
	d2 := "HTTPS://EXAMPLE.COM/"
	second, res, err := h.RegisterSource(ctx, commands.RegisterSource{Org: b, Request: domain.SourceRequest{SourceType: "site", Domain: &d2}})
	if err != nil || !second.Created {
		t.Fatalf("second register: created %v err %v", second.Created, err)
	}
	if first.ID != second.ID {
		t.Fatalf("records %s / %s", first.ID, second.ID)
	}
	if len(res.EventTypes) != 1 || res.EventTypes[0] != "SourceLinkedToOrganization" {
		t.Fatalf("second register appended %v", res.EventTypes)
	}
	third, res, err := h.RegisterSource(ctx, commands.RegisterSource{Org: b, Request: domain.SourceRequest{SourceType: "site", Domain: &d}})
	if err != nil || !res.Empty() || third.Created || third.ID != first.ID {
		t.Fatalf("a third register by a linked organization appended %v (err %v, created %v); want nothing", res.EventTypes, err, third.Created)
	}
}

func TestAnItemIsAddedToAFeedOnce(t *testing.T) {
	for name, newStore := range stores {
		t.Run(name, func(t *testing.T) { anItemIsAddedOnce(t, newStore) })
	}
}

func anItemIsAddedOnce(t *testing.T, newStore func(*testing.T) (*commands.Handler, eventstore.Store)) {
	h, _ := newStore(t)
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
		added, _, err := h.AddNewsItem(ctx, commands.AddNewsItem{ItemTarget: domain.ItemTarget{FeedID: feed, OrganizationID: uuid.New(), SourceID: src, SourceType: domain.SourceSite}, Article: d.ArticleDiscovered})
		if err != nil || added != want {
			t.Fatalf("add #%d: added %v err %v, want %v", i+1, added, err, want)
		}
	}
}

func TestCommandsOnAnotherOrganizationsFeedAnswerNotFound(t *testing.T) {
	h, _ := setup(t)
	ctx := context.Background()
	f, _, err := h.CreateFeed(ctx, commands.CreateFeed{Kind: domain.FeedNews, Org: uuid.New(), Name: "n", Description: "d"})
	id := f.ID
	if err != nil {
		t.Fatal(err)
	}
	stranger := uuid.New()
	name := "mine now"
	if _, _, err := h.UpdateFeed(ctx, commands.UpdateFeed{FeedRef: commands.FeedRef{Kind: domain.FeedNews, Org: stranger, FeedID: id}, Update: domain.FeedUpdate{Name: &name}}); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("update by another organization: %v", err)
	}
	if _, err := h.DeleteFeed(ctx, commands.FeedRef{Kind: domain.FeedNews, Org: stranger, FeedID: id}); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("delete by another organization: %v", err)
	}
}
