package copies_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/commands"
	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/readmodel/copies"
	"github.com/feedsvc/feedsvc/readmodel/happeningitems"
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
	return []commands.Option{commands.FindingCopies(f), commands.DecidingCopiesAlone(feedLocks(h))}
}

// feedLocks are the feed locks a process of h has, as service.New makes
// them: waking on its runner, logging to the test.
func feedLocks(h *servicetest.Harness) *copies.FeedLocks {
	return copies.NewFeedLocks(h.Service.DB.Bun, slog.New(slog.NewTextHandler(h.T.Output(), nil))).WakeOn(h.Service.Runner)
}

// TestAFeedsCopyLockHoldsOnlyThatFeed holds one feed's copy lock, as a
// process deciding for it does, and has another process add articles: to
// another feed they are added at once, to the held feed they wait.
func TestAFeedsCopyLockHoldsOnlyThatFeed(t *testing.T) {
	h := servicetest.Start(t)
	ctx := context.Background()
	locks := feedLocks(h)
	other := commands.New(h.Service.Store, h.Service.Lookups, racingOptions(h, copies.NewQueries(h.Service.DB.Bun))...)
	held, free := newFeedTarget(t, h), newFeedTarget(t, h)
	release, err := locks.Hold(ctx, []uuid.UUID{held.FeedID})
	if err != nil {
		t.Fatal(err)
	}
	defer release(ctx, commands.Result{})
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

// TestALookupTooFarBehindLetsTheFeedGoAndTheAddSucceeds has the read
// model a feed's copy lookup asks fall behind (its projector waits on a
// lock of its table) while an item is added under the feed's lock: past
// the lock's bound the add returns as done, its append kept, and the log
// says the lock was let go early.
func TestALookupTooFarBehindLetsTheFeedGoAndTheAddSucceeds(t *testing.T) {
	h := servicetest.Start(t)
	ctx := context.Background()
	const bound = 300 * time.Millisecond
	r := rand.New(rand.NewPCG(7, 8))
	for _, tc := range []struct {
		name string
		// table is what the lookup's projector writes the add to.
		table string
		// prepare makes the feed and finds what add adds to it.
		prepare func(t *testing.T, cmds *commands.Handler) (add func() (bool, error))
	}{
		{"a news item waits for the copies read model", "news_copy_index", func(t *testing.T, cmds *commands.Handler) func() (bool, error) {
			to := newFeedTarget(t, h)
			stored, _, err := cmds.DiscoverArticles(ctx, []commands.DiscoverArticle{{SourceID: to.SourceID, Content: article(r, "lag.example", 0)}})
			if err != nil {
				t.Fatal(err)
			}
			return func() (bool, error) {
				added, _, err := cmds.AddNewsItems(ctx, []commands.AddNewsItem{{ItemTarget: to, Article: stored[0].ArticleDiscovered}})
				return err == nil && added[0], err
			}
		}},
		{"an event item waits for the event items read model", "event_items", func(t *testing.T, cmds *commands.Handler) func() (bool, error) {
			to := newEventFeed(t, h, 1)[0]
			found, _, err := cmds.DiscoverHappening(ctx, commands.DiscoverHappening{SourceID: to.SourceID,
				Details: concert(to, 0, "Late Trio", time.Date(2027, 5, 1, 20, 0, 0, 0, time.UTC))})
			if err != nil {
				t.Fatal(err)
			}
			return func() (bool, error) {
				added, _, err := cmds.AddHappeningItem(ctx, commands.AddHappeningItem{ItemTarget: to, HappeningID: found.HappeningID})
				return added, err
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var log bytes.Buffer
			locks := copies.NewFeedLocks(h.Service.DB.Bun, slog.New(slog.NewTextHandler(&log, nil))).WakeOn(h.Service.Runner).WaitingAtMost(bound)
			cmds := commands.New(h.Service.Store, h.Service.Lookups, commands.FindingCopies(copies.NewQueries(h.Service.DB.Bun)),
				commands.FindingHappeningCopies(happeningitems.NewQueries(h.Service.DB.Bun)), commands.DecidingCopiesAlone(locks))
			add := tc.prepare(t, cmds)
			// SHARE lets the lookup read the table and keeps the
			// projector from writing to it until the rollback.
			tx, err := h.Service.DB.Bun.BeginTx(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = tx.Rollback() }()
			if _, err := tx.ExecContext(ctx, `LOCK TABLE `+tc.table+` IN SHARE MODE`); err != nil {
				t.Fatal(err)
			}
			began := time.Now()
			added, err := add()
			took := time.Since(began)
			switch {
			case err != nil:
				t.Fatalf("the add was reported failed: %v", err)
			case !added:
				t.Fatal("the item was not added")
			case took < bound:
				t.Errorf("the add returned after %s, before the lock's bound of %s: it did not wait for the read model", took, bound)
			case took > 5*bound:
				t.Errorf("the add returned after %s, long past the lock's bound of %s", took, bound)
			}
			if !strings.Contains(log.String(), "level=WARN") || !strings.Contains(log.String(), "another process may add a copy") {
				t.Errorf("the early release is not logged as a warning: %q", log.String())
			}
		})
	}
}
