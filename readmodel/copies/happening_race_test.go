package copies_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/commands"
	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/readmodel/happeningitems"
	"github.com/feedsvc/feedsvc/testkit/servicetest"
)

// TestTwoProcessesAddingListingsOfOneHappeningMakeOneEventItem has two
// command handlers, as two crawler processes have (each its own
// in-process guard, one event store and database), add one listing each
// of one concert (two sites, two titles, one start and venue) to one
// event feed at the same instant, concert after concert: the feed must get
// one event item per concert, never two.
func TestTwoProcessesAddingListingsOfOneHappeningMakeOneEventItem(t *testing.T) {
	h := servicetest.Start(t)
	ctx := context.Background()
	targets := newEventFeed(t, h, 2)
	procs := make([]*commands.Handler, 2)
	for p := range procs {
		procs[p] = commands.New(h.Service.Store, h.Service.Lookups, racingHappeningOptions(h)...)
	}
	const concerts = 40
	first := time.Date(2027, 3, 1, 19, 30, 0, 0, time.UTC)
	doubled := 0
	for n := range concerts {
		at := first.Add(time.Duration(n) * 24 * time.Hour)
		var wg sync.WaitGroup
		start := make(chan struct{})
		added := make([]bool, 2)
		errs := make([]error, 2)
		for p := range procs {
			// The venue's programme and a ticket site: other
			// identities, other titles, one concert.
			title := fmt.Sprintf("Quartet %d", n)
			if p == 1 {
				title += " – live"
			}
			details := concert(targets[p], n, title, at)
			wg.Add(1)
			go func() {
				defer wg.Done()
				found, _, err := procs[p].DiscoverHappening(ctx, commands.DiscoverHappening{SourceID: targets[p].SourceID, Details: details})
				if err != nil {
					errs[p] = err
					return
				}
				<-start
				added[p], _, errs[p] = procs[p].AddHappeningItem(ctx, commands.AddHappeningItem{ItemTarget: targets[p], HappeningID: found.HappeningID})
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
			t.Fatalf("concert %d: neither listing became the item", n)
		}
	}
	if doubled > 0 {
		t.Errorf("%d of %d concerts became two event items of the feed", doubled, concerts)
	}
}

// racingHappeningOptions are the options each racing process's handler
// has for event feeds.
func racingHappeningOptions(h *servicetest.Harness) []commands.Option {
	return []commands.Option{commands.FindingHappeningCopies(happeningitems.NewQueries(h.Service.DB.Bun)),
		commands.DecidingCopiesAlone(feedLocks(h))}
}

// newEventFeed makes an event feed with sites sites attached, and returns
// where each site's happenings go.
func newEventFeed(t testing.TB, h *servicetest.Harness, sites int) []domain.ItemTarget {
	t.Helper()
	ctx := context.Background()
	org := uuid.New()
	feed, _, err := h.Service.Commands.CreateFeed(ctx, commands.CreateFeed{Kind: domain.FeedHappenings, Org: org, Name: "race", Description: "race"})
	if err != nil {
		t.Fatal(err)
	}
	ref := commands.FeedRef{Kind: domain.FeedHappenings, Org: org, FeedID: feed.ID}
	targets := make([]domain.ItemTarget, sites)
	for i := range targets {
		site := strings.ReplaceAll(uuid.NewString(), "-", "") + ".example"
		att, _, err := h.Service.Commands.AttachSource(ctx, commands.AttachSource{FeedRef: ref, Request: domain.SourceRequest{SourceType: "site", Domain: &site}})
		if err != nil {
			t.Fatal(err)
		}
		targets[i] = domain.ItemTarget{FeedID: feed.ID, OrganizationID: org, AttachmentID: att.ID, SourceID: att.SourceID, SourceType: att.SourceType}
	}
	return targets
}

// concert is a listing, on the page of its n-th concert of the site of to,
// of a concert at the Blue Note at at.
func concert(to domain.ItemTarget, n int, title string, at time.Time) domain.HappeningDetails {
	page := fmt.Sprintf("https://%s.example/concert/%d", to.SourceID, n)
	return domain.HappeningDetails{Identity: "url:" + page, Title: title,
		Location:  &domain.Location{Venue: &domain.Venue{Name: "Blue Note"}, Coordinates: &domain.Coordinates{Lat: 50.0617, Lng: 19.9373}},
		Instances: []domain.HappeningInstance{{Key: at.Format(time.RFC3339), Status: domain.StatusScheduled, Occurrences: []domain.Occurrence{{Start: at}}}},
		Source:    domain.SiteBlock(page), Rank: domain.PrecedenceOwnPage}
}
