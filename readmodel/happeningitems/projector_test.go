package happeningitems_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/projections"
	"github.com/feedsvc/feedsvc/readmodel/happeningitems"
	"github.com/feedsvc/feedsvc/service/projectors"
	"github.com/feedsvc/feedsvc/testkit/projectortest"
	"github.com/feedsvc/feedsvc/testkit/servicetest"
	"github.com/feedsvc/feedsvc/testkit/testdb"
)

func TestTheEventItemsReadModelRebuiltFromTheLogEqualsTheLiveOne(t *testing.T) {
	db, dsn := testdb.New(t)
	store, cmds := projectortest.Commands(db)
	projectortest.HappeningWorkload(t, cmds, uuid.New())
	p := happeningitems.Projector{}
	projectortest.RunUntilCaughtUp(t, store, db, 5, projectors.All()...)
	live := projectortest.Dump(t, db.Bun, p)
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
	if rebuilt := projectortest.Dump(t, db.Bun, p); rebuilt != live {
		t.Fatalf("rebuilt model differs from the live one:\nlive:\n%s\nrebuilt:\n%s", live, rebuilt)
	}
	// The rebuilt table keeps the live one's storage parameters (LIKE does
	// not copy them), so its rows keep what a list reads uncompressed.
	var params string
	var compressed int
	if err := db.Bun.NewRaw(`SELECT array_to_string(reloptions, ','),
		(SELECT count(*) FROM calendar_events WHERE pg_column_compression(current_tail) IS NOT NULL)
		FROM pg_class WHERE oid = 'calendar_events'::regclass`).Scan(context.Background(), &params, &compressed); err != nil {
		t.Fatal(err)
	}
	if params != "toast_tuple_target=8160" || compressed != 0 {
		t.Fatalf("rebuilt calendar_events: storage parameters %q, %d compressed renderings; want toast_tuple_target=8160 and none", params, compressed)
	}
}

// A list reads four of the projector's tables in one statement; the swap
// replaces them all. Readers must neither fail nor see an empty model.
func TestARebuildOfEventItemsSwapsInWhileListsAreRead(t *testing.T) {
	db, dsn := testdb.New(t)
	store, cmds := projectortest.Commands(db)
	org := uuid.New()
	projectortest.HappeningWorkload(t, cmds, org)
	projectortest.RunUntilCaughtUp(t, store, db, 50, projectors.All()...)
	var feeds []uuid.UUID
	if err := db.Bun.NewRaw("SELECT DISTINCT feed_id FROM event_items WHERE visible ORDER BY 1").Scan(context.Background(), &feeds); err != nil || len(feeds) == 0 {
		t.Fatalf("feeds with items: %v %v", feeds, err)
	}
	q := happeningitems.NewQueries(db.Bun)
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
				page, err := q.Items(context.Background(), org, feeds[r%len(feeds)], filter)
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
