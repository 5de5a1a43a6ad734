package happeningitems_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/commands"
	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/internal/projectors"
	"github.com/feedsvc/feedsvc/internal/servicetest"
	"github.com/feedsvc/feedsvc/internal/testdb"
	"github.com/feedsvc/feedsvc/projections"
	"github.com/feedsvc/feedsvc/readmodel"
	"github.com/feedsvc/feedsvc/readmodel/happeningitems"
)

// eventWorkload stores event feeds with sources, events found, changed and
// added through several attachments, a detach and a feed
// deletion: every event the eventitems projector reads.
func eventWorkload(t *testing.T, cmds *commands.Handler, org uuid.UUID) {
	t.Helper()
	ctx := context.Background()
	base := time.Date(2026, 12, 1, 18, 0, 0, 0, time.UTC)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	for f := range 4 {
		feed, _, err := cmds.CreateFeed(ctx, commands.CreateFeed{Kind: domain.FeedHappenings, Org: org, Name: fmt.Sprintf("events %d", f), Description: "d"})
		must(err)
		ref := commands.FeedRef{Kind: domain.FeedHappenings, Org: org, FeedID: feed.ID}
		var atts []domain.Attachment
		for s := range 2 {
			site := fmt.Sprintf("site%d.example", (f+s)%3)
			att, _, err := cmds.AttachSource(ctx, commands.AttachSource{FeedRef: ref, Request: domain.SourceRequest{SourceType: "site", Domain: &site}})
			must(err)
			atts = append(atts, att)
		}
		for e := range 6 {
			att := atts[e%2]
			start := base.Add(time.Duration(e*24+f) * time.Hour)
			d := domain.HappeningDetails{
				Identity: fmt.Sprintf("https://site.example/e/%d", e), Title: fmt.Sprintf("Event %d", e),
				Instances: []domain.HappeningInstance{
					{Key: "a", Status: domain.StatusScheduled, Occurrences: []domain.Occurrence{{Start: start}, {Start: start.Add(24 * time.Hour)}}},
					{Key: "b", Status: domain.StatusCancelled, Occurrences: []domain.Occurrence{{Start: start.Add(7 * 24 * time.Hour)}}},
				},
				Source: domain.SiteBlock(fmt.Sprintf("https://site.example/e/%d", e)),
			}
			found, _, err := cmds.DiscoverHappening(ctx, commands.DiscoverHappening{SourceID: att.SourceID, Details: d})
			must(err)
			for _, a := range atts[:1+e%2] {
				_, _, err := cmds.AddHappeningItem(ctx, commands.AddHappeningItem{
					ItemTarget: domain.ItemTarget{FeedID: feed.ID, OrganizationID: org, AttachmentID: a.ID, SourceID: a.SourceID, SourceType: a.SourceType},
					EventID:    found.EventID,
				})
				must(err)
			}
		}
		switch f {
		case 1:
			_, err := cmds.DetachSource(ctx, commands.DetachSource{FeedRef: ref, AttachmentID: atts[0].ID})
			must(err)
		case 2:
			_, err := cmds.DeleteFeed(ctx, ref)
			must(err)
		}
	}
}

func TestTheEventItemsReadModelRebuiltFromTheLogEqualsTheLiveOne(t *testing.T) {
	db, dsn := testdb.New(t)
	store, cmds := sqlCommands(db)
	eventWorkload(t, cmds, uuid.New())
	p := happeningitems.Projector{}
	runUntilCaughtUp(t, store, db, 5, projectors.All()...)
	live := dump(t, db.Bun, p)
	var visible, hidden, occurrences int
	if err := db.Bun.NewRaw(`SELECT count(*) FILTER (WHERE visible), count(*) FILTER (WHERE NOT visible),
		(SELECT count(*) FROM event_item_occurrences) FROM event_items`).Scan(context.Background(), &visible, &hidden, &occurrences); err != nil {
		t.Fatal(err)
	}
	// Feeds 0, 1 and 3 hold 6 events each; feed 1 lost the three that only
	// its first attachment brought; each visible item has 3 occurrences.
	if visible != 15 || hidden != 3 || occurrences != 45 {
		t.Fatalf("live model: %d visible, %d hidden items, %d occurrences; want 15, 3, 45", visible, hidden, occurrences)
	}
	if err := projections.Rebuild(context.Background(), dsn, db, store, p, servicetest.Logger()); err != nil {
		t.Fatal(err)
	}
	if rebuilt := dump(t, db.Bun, p); rebuilt != live {
		t.Fatalf("rebuilt model differs from the live one:\nlive:\n%s\nrebuilt:\n%s", live, rebuilt)
	}
}

// A list reads four of the projector's tables in one statement; the swap
// replaces them all. Readers must neither fail nor see an empty model.
func TestARebuildOfEventItemsSwapsInWhileListsAreRead(t *testing.T) {
	db, dsn := testdb.New(t)
	store, cmds := sqlCommands(db)
	org := uuid.New()
	eventWorkload(t, cmds, org)
	runUntilCaughtUp(t, store, db, 50, projectors.All()...)
	var feeds []uuid.UUID
	if err := db.Bun.NewRaw("SELECT DISTINCT feed_id FROM event_items WHERE visible ORDER BY 1").Scan(context.Background(), &feeds); err != nil || len(feeds) == 0 {
		t.Fatalf("feeds with items: %v %v", feeds, err)
	}
	q := readmodel.NewLookups(db.Bun)
	filter := happeningitems.Filter{
		Since: time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC), Until: time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC),
		Limit: 20, Now: time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC),
	}
	stop := make(chan struct{})
	failures := make(chan error, 8)
	var wg sync.WaitGroup
	var reads atomic.Int64
	for r := range 4 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				page, err := q.EventItems(context.Background(), org, feeds[r%len(feeds)], filter)
				if err == nil && page.Total == 0 {
					err = fmt.Errorf("feed %s read empty", feeds[r%len(feeds)])
				}
				if err != nil {
					failures <- err
					return
				}
				reads.Add(1)
			}
		})
	}
	for range 3 {
		if err := projections.Rebuild(context.Background(), dsn, db, store, happeningitems.Projector{}, servicetest.Logger()); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	wg.Wait()
	close(failures)
	for err := range failures {
		t.Error(err)
	}
	if reads.Load() == 0 {
		t.Fatal("no list was read during the rebuilds")
	}
}
