package projections_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/internal/database"
	"github.com/feedsvc/feedsvc/projections"
	"github.com/feedsvc/feedsvc/readmodel/articles"
	"github.com/feedsvc/feedsvc/readmodel/feeds"
	"github.com/feedsvc/feedsvc/readmodel/newsitems"
	"github.com/feedsvc/feedsvc/readmodel/sources"
	"github.com/feedsvc/feedsvc/service"
	"github.com/feedsvc/feedsvc/service/config"
	"github.com/feedsvc/feedsvc/testkit/projectortest"
	"github.com/feedsvc/feedsvc/testkit/servicetest"
	"github.com/feedsvc/feedsvc/testkit/testdb"
	"github.com/feedsvc/feedsvc/testkit/wait"
)

// copyNewsItems stores n items of a feed's attachment straight into the
// log, as commands would have appended them one stream each: thousands
// of them through the commands would take most of the test.
func copyNewsItems(t *testing.T, db *database.DB, feed, org, attachment, source uuid.UUID, n int) {
	t.Helper()
	meta, _ := json.Marshal(map[string]any{"schemaVersion": domain.SchemaVersion, "organizationId": org})
	base := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	rows := make([][]any, 0, n)
	for i := range n {
		at := base.Add(time.Duration(i) * time.Second)
		e := domain.NewsItemAdded{
			ItemID: uuid.Must(uuid.NewV7()), FeedID: feed, OrganizationID: org, AttachmentID: attachment, SourceID: source,
			SourceType: domain.SourceSite, NewsPageID: uuid.New(), VersionID: uuid.New(),
			Content: domain.ArticleContent{URL: fmt.Sprintf("https://news.example/%d", i), Title: fmt.Sprintf("Story %d", i)}, At: at,
		}
		data, err := domain.EncodeEvent(e)
		if err != nil {
			t.Fatal(err)
		}
		rows = append(rows, []any{domain.NewsItemStream(feed, e.NewsPageID), int64(0), uuid.New(), e.EventType(), json.RawMessage(data), json.RawMessage(meta)})
	}
	if _, err := db.Pool.CopyFrom(context.Background(), pgx.Identifier{"events"},
		[]string{"stream_id", "stream_revision", "event_id", "event_type", "data", "metadata"}, pgx.CopyFromRows(rows)); err != nil {
		t.Fatal(err)
	}
}

// startProcess runs another projections process of the service on dsn
// until the test ends, as a second `feedsvc serve` would.
func startProcess(t *testing.T, dsn string) *service.Service {
	t.Helper()
	cfg := config.Config{
		DatabaseURL: dsn, ConsistencyTimeout: 10 * time.Second, PollInterval: time.Hour,
		Roles: map[string]bool{config.RoleProjections: true},
	}
	ctx, cancel := context.WithCancel(context.Background())
	svc, err := service.New(ctx, cfg, servicetest.Logger())
	if err != nil {
		cancel()
		t.Fatalf("start a process: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- svc.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		<-done
		svc.Close()
	})
	return svc
}

func storedVersion(t *testing.T, db *database.DB, name string) int {
	t.Helper()
	var v int
	if err := db.Bun.NewRaw("SELECT version FROM projection_checkpoints WHERE name = ?", name).Scan(context.Background(), &v); err != nil {
		t.Fatal(err)
	}
	return v
}

func TestAVersionBumpIsRebuiltOnceByTwoStartingProcessesWhileReadsKeepAnswering(t *testing.T) {
	const items = 6000
	h := servicetest.Start(t)
	db := h.Service.DB
	feed := h.Do("POST", "/feeds/news", map[string]string{"name": "big", "description": "d"}).MustStatus(t, 201).Data()
	att := h.Do("POST", "/feeds/news/"+feed["id"].(string)+"/sources", map[string]string{"sourceType": "site", "domain": "news.example"}).MustStatus(t, 201).Data()
	feedID := uuid.MustParse(feed["id"].(string))
	var org uuid.UUID
	if err := db.Bun.NewRaw("SELECT organization_id FROM feeds WHERE id = ?", feedID).Scan(context.Background(), &org); err != nil {
		t.Fatal(err)
	}
	copyNewsItems(t, db, feedID, org, uuid.MustParse(att["id"].(string)), uuid.MustParse(att["sourceId"].(string)), items)
	list := "/feeds/news/" + feedID.String() + "/items?limit=50"
	wait.Until(t, 60*time.Second, "the live projector to project the items", func() bool {
		return h.Do("GET", list, nil).Data()["total"] == float64(items)
	})

	// The code's newsitems is now newer than the read model (as after a
	// bump of its Version).
	if _, err := db.Pool.Exec(context.Background(), "UPDATE projection_checkpoints SET version = 0 WHERE name = 'newsitems'"); err != nil {
		t.Fatal(err)
	}

	stop := make(chan struct{})
	var wg sync.WaitGroup
	var reads atomic.Int64
	var failure atomic.Value
	for range 2 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				r := h.Do("GET", list, nil)
				if r.Status != 200 {
					failure.CompareAndSwap(nil, fmt.Sprintf("a read answered %d: %s", r.Status, r.Raw))
					return
				}
				page, _ := r.Data()["items"].([]any)
				if total, n := r.Data()["total"], len(page); total != float64(items) || n != 50 {
					failure.CompareAndSwap(nil, fmt.Sprintf("a read during the rebuild answered total %v with %d items, want %d and 50", total, n, items))
					return
				}
				reads.Add(1)
			}
		})
	}
	// Two processes start at once.
	var procs [2]*service.Service
	var starting sync.WaitGroup
	for i := range procs {
		starting.Go(func() { procs[i] = startProcess(t, h.DSN) })
	}
	starting.Wait()
	readsBefore := reads.Load()
	wait.Until(t, 2*time.Minute, "the outdated read model to be rebuilt", func() bool {
		return failure.Load() != nil || storedVersion(t, db, "newsitems") == (newsitems.Projector{}).Version()
	})
	readsDuring := reads.Load() - readsBefore
	// Reads after the swap too: with two readers, the third read answered
	// from now on began after the swap.
	swapped := reads.Load()
	wait.Until(t, 30*time.Second, "reads after the swap", func() bool { return failure.Load() != nil || reads.Load() >= swapped+3 })
	close(stop)
	wg.Wait()
	if f := failure.Load(); f != nil {
		t.Fatal(f)
	}
	if readsDuring == 0 {
		t.Fatal("no read was answered during the rebuild: the test proves nothing")
	}

	phases := map[string]int{}
	wait.Within(30*time.Second, func() bool {
		clear(phases)
		for _, p := range procs {
			for _, s := range p.Rebuilds.States() {
				if s.Projector == "newsitems" {
					phases[s.Phase]++
				}
			}
		}
		return phases[projections.PhaseDone]+phases[projections.PhaseDoneElse] >= 2
	})
	if phases[projections.PhaseDone] != 1 || phases[projections.PhaseDoneElse] != 1 {
		t.Fatalf("the processes saw the rebuild as %v, want one done here and one done by the other", phases)
	}
	var metrics []string
	for _, p := range procs {
		families, err := p.Metrics.Gather()
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range families {
			for _, m := range f.GetMetric() {
				labels := map[string]string{}
				for _, l := range m.GetLabel() {
					labels[l.GetName()] = l.GetValue()
				}
				if labels["projector"] == "newsitems" && (f.GetName() == "feedsvc_projection_rebuild_phase" || f.GetName() == "feedsvc_projection_rebuild_events_read") {
					metrics = append(metrics, fmt.Sprintf("%s %s %v", f.GetName(), labels["phase"], m.GetGauge().GetValue()))
				}
			}
		}
	}
	slices.Sort(metrics)
	want := []string{
		"feedsvc_projection_rebuild_events_read  0",
		fmt.Sprintf("feedsvc_projection_rebuild_events_read  %d", items), // the events of its types
		"feedsvc_projection_rebuild_phase done 1",
		"feedsvc_projection_rebuild_phase done by another process 1",
	}
	if !slices.Equal(metrics, want) {
		t.Fatalf("metrics of the rebuild:\n%s\nwant\n%s", strings.Join(metrics, "\n"), strings.Join(want, "\n"))
	}
	var rebuilt, failed int
	if err := db.Bun.NewRaw(`SELECT count(*) FILTER (WHERE finished_at IS NOT NULL), count(error) FROM projection_rebuilds WHERE name = 'newsitems'`).
		Scan(context.Background(), &rebuilt, &failed); err != nil {
		t.Fatal(err)
	}
	if rebuilt != 1 || failed != 0 {
		t.Fatalf("projection_rebuilds has %d finished rebuilds and %d errors, want 1 and 0", rebuilt, failed)
	}
	t.Logf("%d reads answered during the rebuild", readsDuring)
}

// bumped is a projector as a later release declares it.
type bumped struct {
	projections.Projector
	version int
}

func (b bumped) Version() int { return b.version }

func TestOnlyReadModelsOlderThanTheirProjectorAreOutdated(t *testing.T) {
	db, dsn := testdb.New(t)
	store, cmds := projectortest.Commands(db)
	projectortest.FeedWorkload(t, cmds, uuid.New(), 3)
	projectortest.RunUntilCaughtUp(t, store, db, 50, feeds.Projector{}, sources.Projector{})
	r := &projections.Rebuilder{DSN: dsn, DB: db, Store: store, Logger: servicetest.Logger()}
	cases := []struct {
		name     string
		p        projections.Projector
		outdated bool
	}{
		{"a projector of the version that built its read model is current", feeds.Projector{}, false},
		{"a projector of a newer version is outdated", bumped{feeds.Projector{}, 2}, true},
		{"a projector older than its read model is left alone", bumped{sources.Projector{}, 0}, false},
		{"a projector that never ran is not outdated: it starts at its version", bumped{articles.Projector{}, 5}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := r.Outdated(context.Background(), []projections.Projector{c.p})
			if err != nil {
				t.Fatal(err)
			}
			if (len(got) == 1) != c.outdated {
				t.Fatalf("outdated %v, want %v", len(got) == 1, c.outdated)
			}
		})
	}

	before := projectortest.Dump(t, db.Bun, feeds.Projector{})
	if err := r.RebuildOutdated(context.Background(), []projections.Projector{bumped{feeds.Projector{}, 2}, sources.Projector{}}); err != nil {
		t.Fatal(err)
	}
	if v := storedVersion(t, db, "feeds"); v != 2 {
		t.Fatalf("after the rebuild feeds is at version %d, want 2", v)
	}
	if v := storedVersion(t, db, "sources"); v != 1 {
		t.Fatalf("sources, not outdated, moved to version %d", v)
	}
	if after := projectortest.Dump(t, db.Bun, feeds.Projector{}); after != before {
		t.Fatalf("the rebuilt read model differs:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	// A manual rebuild while another holds the projector's lock is refused.
	held := &projections.Rebuilder{DSN: dsn, DB: db, Store: store, Logger: servicetest.Logger()}
	unlock := holdRebuildLock(t, db, "feeds")
	err := held.Rebuild(context.Background(), feeds.Projector{})
	unlock()
	if err == nil || !errors.Is(err, projections.ErrRebuildRunning) {
		t.Fatalf("a rebuild while another runs answered %v, want ErrRebuildRunning", err)
	}
	// So is a rebuild of several projectors of which one is held, and it
	// lets go of the locks it took: the other is free to rebuild after.
	unlock = holdRebuildLock(t, db, "feeds")
	err = held.Rebuild(context.Background(), sources.Projector{}, feeds.Projector{})
	unlock()
	if err == nil || !errors.Is(err, projections.ErrRebuildRunning) {
		t.Fatalf("a rebuild of sources and feeds while feeds's runs answered %v, want ErrRebuildRunning", err)
	}
	unlock = holdRebuildLock(t, db, "sources")
	unlock()
}

// holdRebuildLock holds a projector's rebuild lock as a rebuild in another
// process would, until unlock.
func holdRebuildLock(t *testing.T, db *database.DB, name string) (unlock func()) {
	t.Helper()
	ctx := context.Background()
	conn, err := db.Pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock(hashtextextended($1, 0))", "projection-rebuild:"+name); err != nil {
		t.Fatal(err)
	}
	return func() {
		if _, err := conn.Exec(ctx, "SELECT pg_advisory_unlock(hashtextextended($1, 0))", "projection-rebuild:"+name); err != nil {
			t.Error(err)
		}
		conn.Release()
	}
}
