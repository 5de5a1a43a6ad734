package copies_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/commands"
	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/readmodel/copies"
	"github.com/feedsvc/feedsvc/testkit/servicetest"
)

// TestTwoProcessesAddingCopiesOfOneStoryMakeOneItem has two command
// handlers, as two crawler processes have (each its own in-process guard,
// one event store and database), add a copy of one story each to one feed
// at the same instant, story after story: the feed must get one item per
// story, never two.
func TestTwoProcessesAddingCopiesOfOneStoryMakeOneItem(t *testing.T) {
	h := servicetest.Start(t)
	ctx := context.Background()
	auth := map[string]string{"Authorization": "Bearer " + h.Key}
	feed := h.DoWith("POST", "/feeds/news", map[string]any{"name": "race", "description": "race"}, auth).Data()["id"].(string)
	var org uuid.UUID
	if err := h.Service.DB.Bun.NewRaw(`SELECT organization_id FROM feeds WHERE id = ?`, feed).Scan(ctx, &org); err != nil {
		t.Fatal(err)
	}
	targets := make([]domain.ItemTarget, 2)
	sites := make([]string, 2)
	procs := make([]*commands.Handler, 2)
	for p := range procs {
		sites[p] = strings.ReplaceAll(uuid.NewString(), "-", "") + ".example"
		att := h.DoWith("POST", "/feeds/news/"+feed+"/sources", map[string]any{"sourceType": "site", "domain": sites[p]}, auth).Data()
		targets[p] = domain.ItemTarget{FeedID: uuid.MustParse(feed), OrganizationID: org, AttachmentID: uuid.MustParse(att["id"].(string)),
			SourceID: uuid.MustParse(att["sourceId"].(string)), SourceType: domain.SourceSite}
		procs[p] = commands.New(h.Service.Store, h.Service.Lookups, racingOptions(h, copies.NewQueries(h.Service.DB.Bun))...)
	}
	const stories = 40
	r := rand.New(rand.NewPCG(3, 4))
	doubled := 0
	for s := range stories {
		story := article(r, sites[0], s)
		var wg sync.WaitGroup
		start := make(chan struct{})
		added := make([]bool, 2)
		errs := make([]error, 2)
		for p := range procs {
			content := story
			content.URL = fmt.Sprintf("https://%s/story/%d", sites[p], s)
			wg.Add(1)
			go func() {
				defer wg.Done()
				stored, _, err := procs[p].DiscoverArticles(ctx, []commands.DiscoverArticle{{SourceID: targets[p].SourceID, Content: content}})
				if err != nil {
					errs[p] = err
					return
				}
				<-start
				a, _, err := procs[p].AddNewsItems(ctx, []commands.AddNewsItem{{ItemTarget: targets[p], Article: stored[0].ArticleDiscovered}})
				if err != nil {
					errs[p] = err
					return
				}
				added[p] = a[0]
			}()
		}
		close(start)
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		if added[0] && added[1] {
			doubled++
		}
		if !added[0] && !added[1] {
			t.Fatalf("story %d: neither copy became the item", s)
		}
	}
	if doubled > 0 {
		t.Errorf("%d of %d stories became two items of the feed", doubled, stories)
	}
}

// racingOptions are the options each racing process's handler has.
func racingOptions(h *servicetest.Harness, f commands.CopyFinder) []commands.Option {
	return []commands.Option{commands.FindingCopies(f), commands.DecidingCopiesAlone(copies.NewFeedLocks(h.Service.DB.Bun))}
}

// TestAFeedsCopyLockHoldsOnlyThatFeed holds one feed's copy lock, as a
// process deciding for it does, and has another process add articles: to
// another feed they are added at once, to the held feed they wait.
func TestAFeedsCopyLockHoldsOnlyThatFeed(t *testing.T) {
	h := servicetest.Start(t)
	ctx := context.Background()
	locks := copies.NewFeedLocks(h.Service.DB.Bun)
	other := commands.New(h.Service.Store, h.Service.Lookups, racingOptions(h, copies.NewQueries(h.Service.DB.Bun))...)
	held, free := newFeedTarget(t, h), newFeedTarget(t, h)
	release, err := locks.Hold(ctx, []uuid.UUID{held.FeedID})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = release(ctx, commands.Result{}) }()
	r := rand.New(rand.NewPCG(5, 6))
	for i, tc := range []struct {
		name  string
		to    domain.ItemTarget
		waits bool
	}{
		{"another feed's article is added while the lock is held", free, false},
		{"the held feed's article waits for the lock", held, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stored, _, err := other.DiscoverArticles(ctx, []commands.DiscoverArticle{{SourceID: tc.to.SourceID, Content: article(r, "lock.example", i)}})
			if err != nil {
				t.Fatal(err)
			}
			// Long enough for an unlocked add, far shorter than the
			// held lock.
			actx, cancel := context.WithTimeout(ctx, 3*time.Second)
			defer cancel()
			added, _, err := other.AddNewsItems(actx, []commands.AddNewsItem{{ItemTarget: tc.to, Article: stored[0].ArticleDiscovered}})
			switch {
			case tc.waits && err == nil:
				t.Fatalf("added %v while another process held the feed's lock", added)
			case tc.waits && !errors.Is(err, context.DeadlineExceeded):
				t.Fatalf("waiting for the lock: %v", err)
			case !tc.waits && err != nil:
				t.Fatal(err)
			case !tc.waits && !added[0]:
				t.Fatal("the article was not added")
			}
		})
	}
}

// newFeedTarget makes a news feed with a site attached, and returns where
// that site's articles go.
func newFeedTarget(t *testing.T, h *servicetest.Harness) domain.ItemTarget {
	t.Helper()
	auth := map[string]string{"Authorization": "Bearer " + h.Key}
	feed := h.DoWith("POST", "/feeds/news", map[string]any{"name": "locks", "description": "locks"}, auth).Data()["id"].(string)
	var org uuid.UUID
	if err := h.Service.DB.Bun.NewRaw(`SELECT organization_id FROM feeds WHERE id = ?`, feed).Scan(context.Background(), &org); err != nil {
		t.Fatal(err)
	}
	site := strings.ReplaceAll(uuid.NewString(), "-", "") + ".example"
	att := h.DoWith("POST", "/feeds/news/"+feed+"/sources", map[string]any{"sourceType": "site", "domain": site}, auth).Data()
	return domain.ItemTarget{FeedID: uuid.MustParse(feed), OrganizationID: org, AttachmentID: uuid.MustParse(att["id"].(string)),
		SourceID: uuid.MustParse(att["sourceId"].(string)), SourceType: domain.SourceSite}
}
