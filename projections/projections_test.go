package projections_test

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/feedsvc/feedsvc/commands"
	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/eventstore"
	"github.com/feedsvc/feedsvc/internal/database"
	"github.com/feedsvc/feedsvc/projections"
	"github.com/feedsvc/feedsvc/readmodel/feeds"
	"github.com/feedsvc/feedsvc/service/projectors"
	"github.com/feedsvc/feedsvc/testkit/projectortest"
	"github.com/feedsvc/feedsvc/testkit/servicetest"
	"github.com/feedsvc/feedsvc/testkit/testdb"
	"github.com/feedsvc/feedsvc/testkit/wait"
)

// counter is a deliberately non-idempotent projector: it adds one per event
// it sees, so any event applied twice or lost shows up in the totals.
type counter struct{}

func (counter) Name() string     { return "counter" }
func (counter) Version() int     { return 1 }
func (counter) Tables() []string { return []string{"test_event_counts"} }
func (c counter) Handlers() []projections.Handler {
	return []projections.Handler{projections.OnEvery(c.Project)}
}
func (counter) Project(ctx context.Context, db bun.IDB, e projections.Envelope) error {
	_, err := db.NewRaw(`INSERT INTO test_event_counts (event_id, n) VALUES (?, 1)
		ON CONFLICT (event_id) DO UPDATE SET n = test_event_counts.n + 1`, e.EventID).Exec(ctx)
	return err
}

func countEvents(t *testing.T, db *database.DB) int {
	t.Helper()
	var n int
	if err := db.Bun.NewRaw("SELECT count(*) FROM events").Scan(context.Background(), &n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestAProjectorKilledAtRandomMomentsAppliesEveryEventExactlyOnce(t *testing.T) {
	db, _ := testdb.New(t)
	ctx := context.Background()
	if _, err := db.Bun.ExecContext(ctx, "CREATE TABLE test_event_counts (event_id uuid PRIMARY KEY, n int NOT NULL)"); err != nil {
		t.Fatal(err)
	}
	store, cmds := projectortest.Commands(db)
	projectortest.FeedWorkload(t, cmds, uuid.New(), 60)
	total := countEvents(t, db)

	// Kill the runner again and again, mid-batch or between batches, and
	// restart it; each run gets a little further.
	rng := rand.New(rand.NewPCG(1, 2))
	for round := 0; round < 15; round++ {
		runner, err := projections.NewRunner(store, db.Bun, servicetest.Logger(), projections.RunnerConfig{BatchSize: 13}, counter{})
		if err != nil {
			t.Fatal(err)
		}
		rctx, cancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- runner.Run(rctx) }()
		<-runner.Running()
		time.Sleep(time.Duration(rng.IntN(15)) * time.Millisecond) // stopped at a random point of its work
		cancel()
		<-done
	}
	projectortest.RunUntilCaughtUp(t, store, db, 13, counter{})

	var rows, sum, maxN int
	if err := db.Bun.NewRaw("SELECT count(*), coalesce(sum(n),0), coalesce(max(n),0) FROM test_event_counts").Scan(ctx, &rows, &sum, &maxN); err != nil {
		t.Fatal(err)
	}
	if rows != total || sum != total || maxN != 1 {
		t.Fatalf("counted %d distinct events with sum %d and max %d per event; the log has %d (each must be applied exactly once)", rows, sum, maxN, total)
	}
}

func TestAProjectorFailingMidBatchRollsTheBatchBackAndRetriesIt(t *testing.T) {
	db, _ := testdb.New(t)
	ctx := context.Background()
	if _, err := db.Bun.ExecContext(ctx, "CREATE TABLE test_event_counts (event_id uuid PRIMARY KEY, n int NOT NULL)"); err != nil {
		t.Fatal(err)
	}
	store, cmds := projectortest.Commands(db)
	projectortest.FeedWorkload(t, cmds, uuid.New(), 10)
	total := countEvents(t, db)
	flaky := &failOnce{counter: counter{}, failAt: int64(total / 2)}
	projectortest.RunUntilCaughtUp(t, store, db, 50, flaky)
	if !flaky.failed.Load() {
		t.Fatal("the projector never failed; the test proves nothing")
	}
	var sum, maxN int
	if err := db.Bun.NewRaw("SELECT coalesce(sum(n),0), coalesce(max(n),0) FROM test_event_counts").Scan(ctx, &sum, &maxN); err != nil {
		t.Fatal(err)
	}
	if sum != total || maxN != 1 {
		t.Fatalf("sum %d max %d, want %d and 1: the failed batch's writes leaked", sum, maxN, total)
	}
}

type failOnce struct {
	counter
	seen   atomic.Int64
	failAt int64
	failed atomic.Bool
}

func (f *failOnce) Handlers() []projections.Handler {
	return []projections.Handler{projections.OnEvery(f.Project)}
}

func (f *failOnce) Project(ctx context.Context, db bun.IDB, e projections.Envelope) error {
	if err := f.counter.Project(ctx, db, e); err != nil {
		return err
	}
	if f.seen.Add(1) == f.failAt && f.failed.CompareAndSwap(false, true) {
		return fmt.Errorf("injected failure after writing")
	}
	return nil
}

func TestARestartedReadModelIsIdenticalToAFreshRebuild(t *testing.T) {
	db, dsn := testdb.New(t)
	store, cmds := projectortest.Commands(db)
	projectortest.FeedWorkload(t, cmds, uuid.New(), 40)
	ps := projectors.All()

	// Run in pieces: kill and restart several times.
	for round := 0; round < 5; round++ {
		runner, err := projections.NewRunner(store, db.Bun, servicetest.Logger(), projections.RunnerConfig{BatchSize: 7}, ps...)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- runner.Run(ctx) }()
		<-runner.Running()
		time.Sleep(3 * time.Millisecond) // killed part way, wherever it is
		cancel()
		<-done
	}
	projectortest.RunUntilCaughtUp(t, store, db, 7, ps...)
	indexes := func() []string {
		var names []string
		// Names and definitions: a projector that builds its indexes
		// last (projections.IndexesLast) must end with the same ones.
		if err := db.Bun.NewRaw("SELECT indexname || ': ' || indexdef FROM pg_indexes WHERE schemaname = 'public' ORDER BY 1").Scan(context.Background(), &names); err != nil {
			t.Fatal(err)
		}
		return names
	}
	indexesBefore := fmt.Sprint(indexes())
	defer func() {
		if after := fmt.Sprint(indexes()); after != indexesBefore {
			t.Errorf("rebuilds changed indexes:\nbefore %s\nafter  %s", indexesBefore, after)
		}
	}()
	for _, p := range ps {
		before := projectortest.Dump(t, db.Bun, p)
		if err := projections.Rebuild(context.Background(), dsn, db, store, p, servicetest.Logger()); err != nil {
			t.Fatalf("rebuild %s: %v", p.Name(), err)
		}
		after := projectortest.Dump(t, db.Bun, p)
		if before != after {
			t.Fatalf("%s after restarts differs from a fresh rebuild:\nrestarted:\n%s\nrebuilt:\n%s", p.Name(), before, after)
		}
		// The swapped-in tables come with statistics, so the first reads
		// after a rebuild are not planned blind.
		var unanalyzed []string
		if err := db.Bun.NewRaw(`SELECT relname FROM pg_class
			WHERE relnamespace = 'public'::regnamespace AND relkind = 'r' AND relname IN (?) AND reltuples < 0`,
			bun.In(p.Tables())).Scan(context.Background(), &unanalyzed); err != nil {
			t.Fatal(err)
		}
		if len(unanalyzed) > 0 {
			t.Errorf("%s: tables without statistics after the rebuild: %v", p.Name(), unanalyzed)
		}
		// And vacuumed: without a visibility map every index-only scan
		// goes to the heap. (Whether a page could be marked all-visible
		// depends on the snapshots open meanwhile; that it was vacuumed
		// does not.)
		var unvacuumed []string
		if err := db.Bun.NewRaw(`SELECT relname FROM pg_stat_user_tables
			WHERE schemaname = 'public' AND relname IN (?) AND last_vacuum IS NULL`,
			bun.In(p.Tables())).Scan(context.Background(), &unvacuumed); err != nil {
			t.Fatal(err)
		}
		if len(unvacuumed) > 0 {
			t.Errorf("%s: tables not vacuumed by the rebuild: %v", p.Name(), unvacuumed)
		}
	}
}

func TestARebuildSwapsInWhileReadsAndWritesContinue(t *testing.T) {
	h := servicetest.Start(t)
	for i := 0; i < 30; i++ {
		h.Do("POST", "/feeds/news", map[string]string{"name": fmt.Sprintf("f%d", i), "description": "d"}).MustStatus(t, 201)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var reads, writes atomic.Int64
	var failure atomic.Value
	fail := func(msg string) { failure.CompareAndSwap(nil, msg) }
	wg.Add(2)
	go func() { // readers: never an error, never fewer feeds than before
		defer wg.Done()
		last := 30
		for {
			select {
			case <-stop:
				return
			default:
			}
			r := h.Do("GET", "/feeds/news", nil)
			if r.Status != 200 {
				fail(fmt.Sprintf("list answered %d: %s", r.Status, r.Raw))
				return
			}
			if n := len(r.List()); n < last {
				fail(fmt.Sprintf("list shrank from %d to %d during the rebuild", last, n))
				return
			} else {
				last = n
			}
			reads.Add(1)
		}
	}()
	go func() { // writers: read-after-write holds through the swap
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			r := h.Do("POST", "/feeds/news", map[string]string{"name": fmt.Sprintf("during %d", i), "description": "d"})
			if r.Status != 201 {
				fail(fmt.Sprintf("create answered %d: %s", r.Status, r.Raw))
				return
			}
			id := r.Data()["id"].(string)
			if g := h.Do("GET", "/feeds/news/"+id, nil); g.Status != 200 {
				fail(fmt.Sprintf("feed %s created but GET answered %d", id, g.Status))
				return
			}
			writes.Add(1)
			time.Sleep(5 * time.Millisecond) // paced, so the reads run among the writes
		}
	}()
	wait.Until(t, 30*time.Second, "reads and writes under way", func() bool {
		return failure.Load() != nil || reads.Load() > 0 && writes.Load() > 0
	})
	// Several projectors rebuilt together (one read of the log for all),
	// in small pages so that the writes land during the shared read as
	// well as during each one's catch-up and swap.
	var ps []projections.Projector
	for _, name := range []string{"feeds", "sources", "newsitems", "webhooks"} {
		p, _ := projectors.ByName(name)
		ps = append(ps, p)
	}
	r := &projections.Rebuilder{DSN: h.DSN, DB: h.Service.DB, Store: h.Service.Store, Logger: servicetest.Logger(), BatchSize: 5}
	if err := r.Rebuild(context.Background(), ps...); err != nil {
		t.Fatalf("rebuild: %v", err)
	}
	// Reads and writes after the swaps too: one of each may be in flight,
	// so the second write and the second read answered from now on began
	// after the rebuild.
	wrote, read := writes.Load(), reads.Load()
	wait.Until(t, 30*time.Second, "reads and writes after the rebuild", func() bool {
		return failure.Load() != nil || writes.Load() >= wrote+2 && reads.Load() >= read+2
	})
	close(stop)
	wg.Wait()
	if f := failure.Load(); f != nil {
		t.Fatal(f)
	}
	if reads.Load() == 0 || writes.Load() == 0 {
		t.Fatalf("reads %d writes %d: the load did not overlap the rebuild", reads.Load(), writes.Load())
	}
	want := 30 + int(writes.Load())
	if got := len(h.Do("GET", "/feeds/news", nil).List()); got != want {
		t.Fatalf("after the rebuild the list has %d feeds, want %d", got, want)
	}
}

func TestTwoProcessesProjectingTogetherKeepReadAfterWriteAndApplyEachEventOnce(t *testing.T) {
	db, _ := testdb.New(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if _, err := db.Bun.ExecContext(ctx, "CREATE TABLE test_event_counts (event_id uuid PRIMARY KEY, n int NOT NULL)"); err != nil {
		t.Fatal(err)
	}
	_, cmds := projectortest.Commands(db)
	ps := append(projectors.All(), counter{})
	var runners []*projections.Runner
	for i := 0; i < 2; i++ {
		r, err := projections.NewRunner(eventstore.NewPostgres(db.Pool), db.Bun, servicetest.Logger(), projections.RunnerConfig{BatchSize: 5}, ps...)
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- r.Run(ctx) }()
		t.Cleanup(func() { cancel(); <-done })
		<-r.Running()
		runners = append(runners, r)
	}
	// The waiter of "process A" must see progress made by "process B".
	// Its timeout is generous for a loaded machine. (It had to be: while
	// the log's fence was cluster-wide, other test packages' CREATE and
	// DROP DATABASE held it for a second or more each.)
	waiter := projections.NewWaiter(db.Bun, runners[0], 20*time.Second, ps...)
	queries := feeds.NewQueries(db.Bun)
	org := uuid.New()
	for i := 0; i < 20; i++ {
		f, res, err := cmds.CreateFeed(ctx, commands.CreateFeed{Kind: domain.FeedNews, Org: org, Name: fmt.Sprintf("f%d", i), Description: "d"})
		id := f.ID
		if err != nil {
			t.Fatal(err)
		}
		if err := waiter.Wait(ctx, res.Position, res.EventTypes); err != nil {
			t.Fatalf("write %d: %v", i, err)
		}
		if _, err := queries.Feed(ctx, domain.FeedNews, org, id); err != nil {
			t.Fatalf("feed %d not readable after its write answered: %v", i, err)
		}
	}
	head := projectortest.HeadPosition(t, db)
	for _, r := range runners {
		wctx, wcancel := context.WithTimeout(ctx, 10*time.Second)
		if err := r.Progress("counter").WaitFor(wctx, head); err != nil {
			t.Fatal(err)
		}
		wcancel()
	}
	var sum, maxN, rows int
	if err := db.Bun.NewRaw("SELECT count(*), coalesce(sum(n),0), coalesce(max(n),0) FROM test_event_counts").Scan(ctx, &rows, &sum, &maxN); err != nil {
		t.Fatal(err)
	}
	if total := countEvents(t, db); rows != total || sum != total || maxN != 1 {
		t.Fatalf("two processes applied %d distinct events, sum %d, max %d; the log has %d", rows, sum, maxN, total)
	}
}

// A rebuild of several projectors reads the log once and hands each event
// to every projector of its type, each writing its own shadow and
// checkpoint; every read model must come out as its live projector built
// it, with pages far smaller than the log (so that a projector's events
// span many pages and several projectors' events share one), and a
// projector that fails once mid-rebuild must still apply every event
// exactly once.
func TestProjectorsRebuiltTogetherEqualTheirLiveReadModels(t *testing.T) {
	h := servicetest.Start(t)
	ctx := context.Background()
	db := h.Service.DB
	servicetest.WriteFeedbackHistory(h, 7)
	org := uuid.New()
	projectortest.FeedWorkload(t, h.Service.Commands, org, 12)
	projectortest.HappeningWorkload(t, h.Service.Commands, org)
	if _, err := db.Bun.ExecContext(ctx, "CREATE TABLE test_event_counts (event_id uuid PRIMARY KEY, n int NOT NULL)"); err != nil {
		t.Fatal(err)
	}
	ps := projectors.All()
	head := projectortest.HeadPosition(t, db)
	for _, p := range ps {
		wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		if err := h.Service.Runner.Progress(p.Name()).WaitFor(wctx, head); err != nil {
			t.Fatalf("%s did not catch up: %v", p.Name(), err)
		}
		cancel()
	}
	live := map[string]string{}
	for _, p := range ps {
		live[p.Name()] = projectortest.Dump(t, db.Bun, p)
	}
	total := countEvents(t, db)
	flaky := &failOnce{counter: counter{}, failAt: int64(total / 2)}

	r := &projections.Rebuilder{DSN: h.DSN, DB: db, Store: h.Service.Store, Logger: servicetest.Logger(), BatchSize: 7}
	if err := r.Rebuild(ctx, append(ps, flaky)...); err != nil {
		t.Fatalf("rebuild together: %v", err)
	}
	for _, p := range ps {
		if rebuilt := projectortest.Dump(t, db.Bun, p); rebuilt != live[p.Name()] {
			t.Errorf("%s rebuilt together with the others differs from the live one:\nlive:\n%s\nrebuilt:\n%s", p.Name(), live[p.Name()], rebuilt)
		}
	}
	for _, name := range []string{"newsitems", "insights", "eventitems", "feeds"} {
		p, _ := projectors.ByName(name)
		if strings.HasPrefix(live[name], p.Tables()[0]+" 0 rows") {
			t.Fatalf("the live %s read model is too empty to compare:\n%s", name, live[name])
		}
	}
	if !flaky.failed.Load() {
		t.Fatal("the flaky projector never failed; the test proves nothing about retries")
	}
	var rows, sum, maxN int
	if err := db.Bun.NewRaw("SELECT count(*), coalesce(sum(n),0), coalesce(max(n),0) FROM test_event_counts").Scan(ctx, &rows, &sum, &maxN); err != nil {
		t.Fatal(err)
	}
	if rows != total || sum != total || maxN != 1 {
		t.Fatalf("counted %d distinct events with sum %d and max %d per event; the log has %d (each must be applied exactly once)", rows, sum, maxN, total)
	}
}

// An event this build cannot decode fails a rebuild, saying which event,
// instead of the rebuild going past it or waiting forever; the live read
// model keeps serving.
func TestARebuildOverAnEventItCannotDecodeFailsNamingIt(t *testing.T) {
	db, dsn := testdb.New(t)
	store, cmds := projectortest.Commands(db)
	projectortest.FeedWorkload(t, cmds, uuid.New(), 3)
	bad := uuid.New()
	if _, err := store.AppendToStream(context.Background(), "test-bad", eventstore.Any(),
		eventstore.EventData{ID: bad, Type: domain.NewsItemAdded{}.EventType(), Data: []byte(`{"itemId": 5}`)}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// Otherwise the rebuild may end before the event is readable.
	if !readable(ctx, db, bad) {
		t.Fatal("the event never became readable")
	}
	ps := []projections.Projector{}
	for _, name := range []string{"feeds", "newsitems"} {
		p, _ := projectors.ByName(name)
		ps = append(ps, p)
	}
	err := projections.RebuildAll(ctx, dsn, db, store, ps, servicetest.Logger())
	if err == nil || ctx.Err() != nil || !strings.Contains(err.Error(), bad.String()) {
		t.Fatalf("rebuild over an undecodable event answered %v (deadline: %v), want an error naming event %s", err, ctx.Err(), bad)
	}
}

// A process's main pool can be smaller than its projectors (at the
// default budget, a process of every role has 9 connections for 12
// projectors, the API and the crawler): a batch must never hold its
// transaction's connection while it waits for another one, or every
// connection ends up held by a batch waiting for a second and the
// projectors stop for good. Two runners on a pool of three, catching up
// a log in small pages (so pages are read ahead), must reach its head.
func TestRunnersWithFewerConnectionsThanProjectorsCatchUp(t *testing.T) {
	db, dsn := testdb.New(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if _, err := db.Bun.ExecContext(ctx, "CREATE TABLE test_event_counts (event_id uuid PRIMARY KEY, n int NOT NULL)"); err != nil {
		t.Fatal(err)
	}
	_, cmds := projectortest.Commands(db)
	projectortest.FeedWorkload(t, cmds, uuid.New(), 12)
	small, err := database.WithPool(dsn, 3, "")
	if err != nil {
		t.Fatal(err)
	}
	tight, err := database.Open(ctx, small)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tight.Close)
	ps := append(projectors.All(), counter{})
	var runners []*projections.Runner
	for i := 0; i < 2; i++ {
		r, err := projections.NewRunner(eventstore.NewPostgres(tight.Pool), tight.Bun, servicetest.Logger(), projections.RunnerConfig{BatchSize: 3, PollInterval: 20 * time.Millisecond}, ps...)
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- r.Run(ctx) }()
		t.Cleanup(func() { cancel(); <-done })
		select {
		case <-r.Running():
		case <-time.After(time.Minute):
			t.Fatalf("runner %d did not start within a minute: its projectors hold the pool", i)
		}
		runners = append(runners, r)
	}
	head := projectortest.HeadPosition(t, db)
	for _, r := range runners {
		for _, p := range ps {
			wctx, wcancel := context.WithTimeout(ctx, time.Minute)
			err := r.Progress(p.Name()).WaitFor(wctx, head)
			wcancel()
			if err != nil {
				t.Fatalf("%s stopped at %s short of the head %s: %v", p.Name(), r.Progress(p.Name()).Position(), head, err)
			}
		}
	}
	var applied int
	if err := db.Bun.NewRaw("SELECT coalesce(sum(n),0) FROM test_event_counts").Scan(ctx, &applied); err != nil {
		t.Fatal(err)
	}
	if total := countEvents(t, db); applied != total {
		t.Fatalf("the counter applied %d events; the log has %d", applied, total)
	}
}

// onMessage is a log handler that calls f (once) when a record's message
// starts with prefix: a test's hook into a point of a long operation.
type onMessage struct {
	prefix string
	once   *sync.Once
	f      func()
}

func (h onMessage) Enabled(context.Context, slog.Level) bool { return true }
func (h onMessage) Handle(_ context.Context, r slog.Record) error {
	if strings.HasPrefix(r.Message, h.prefix) {
		h.once.Do(h.f)
	}
	return nil
}
func (h onMessage) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h onMessage) WithGroup(string) slog.Handler      { return h }

// An event this build cannot decode, appended after the rebuild's shared
// read (held back here by an open transaction, as a newer build's append
// during the rebuild would arrive), is met by the shadow projector that
// catches up: the rebuild must fail naming it, not retry until its
// deadline.
func TestARebuildFailsNamingAnUndecodableEventMetWhileCatchingUp(t *testing.T) {
	db, dsn := testdb.New(t)
	store, cmds := projectortest.Commands(db)
	projectortest.FeedWorkload(t, cmds, uuid.New(), 3)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// An append in flight (a transaction that took the appenders' lock and
	// has an xid) holds the log's fence: what is appended after it began
	// stays unread until it ends.
	fence, err := db.Pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer fence.Rollback(context.Background()) //nolint:errcheck // released below
	for _, sql := range []string{"SELECT eventstore_begin_append()", "SELECT pg_current_xact_id()"} {
		if _, err := fence.Exec(ctx, sql); err != nil {
			t.Fatal(err)
		}
	}
	bad := uuid.New()
	if _, err := store.AppendToStream(ctx, "test-bad", eventstore.Any(),
		eventstore.EventData{ID: bad, Type: domain.NewsItemAdded{}.EventType(), Data: []byte(`{"itemId": 5}`)}); err != nil {
		t.Fatal(err)
	}
	// Released when the shared read has ended, and the rebuild goes on
	// only once the event is readable.
	var released atomic.Bool
	logger := slog.New(onMessage{prefix: "read the log once for all projectors", once: &sync.Once{}, f: func() {
		released.Store(fence.Commit(ctx) == nil && readable(ctx, db, bad))
	}})
	p, _ := projectors.ByName("newsitems")
	r := &projections.Rebuilder{DSN: dsn, DB: db, Store: store, Logger: logger}
	err = r.Rebuild(ctx, p)
	if !released.Load() {
		t.Fatal("the shared read never ended, or the event never became readable")
	}
	if err == nil || ctx.Err() != nil || !strings.Contains(err.Error(), bad.String()) {
		t.Fatalf("rebuild over an undecodable event appended during it answered %v (deadline: %v), want an error naming event %s", err, ctx.Err(), bad)
	}
}

// readable waits until the event is below the log's fence, where reads
// find it, and reports whether it got there before ctx's deadline.
func readable(ctx context.Context, db *database.DB, id uuid.UUID) bool {
	deadline, _ := ctx.Deadline()
	return wait.Within(time.Until(deadline), func() bool {
		var below bool
		err := db.Pool.QueryRow(ctx, `SELECT transaction_id < eventstore_fence() FROM events WHERE event_id = $1`, id).Scan(&below)
		return err == nil && below
	})
}

// createdCounter reads one event type: the pages between its events hold
// none of its types, and only move its checkpoint (Subscriber.pass).
type createdCounter struct{}

func (createdCounter) Name() string     { return "created_counter" }
func (createdCounter) Version() int     { return 1 }
func (createdCounter) Tables() []string { return []string{"test_event_counts"} }
func (c createdCounter) Handlers() []projections.Handler {
	return []projections.Handler{projections.OnEnvelope(func(ctx context.Context, db bun.IDB, _ domain.FeedCreated, e projections.Envelope) error {
		return counter{}.Project(ctx, db, e)
	})}
}

func TestAProjectorOfOneTypeKilledAtRandomMomentsCountsEachOfItsEventsOnceAndItsCheckpointReachesTheHead(t *testing.T) {
	db, _ := testdb.New(t)
	ctx := context.Background()
	if _, err := db.Bun.ExecContext(ctx, "CREATE TABLE test_event_counts (event_id uuid PRIMARY KEY, n int NOT NULL)"); err != nil {
		t.Fatal(err)
	}
	store, cmds := projectortest.Commands(db)
	projectortest.FeedWorkload(t, cmds, uuid.New(), 40)
	var created int
	if err := db.Bun.NewRaw("SELECT count(*) FROM events WHERE event_type LIKE '%FeedCreated'").Scan(ctx, &created); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for round := 0; round < 10; round++ {
		runner, err := projections.NewRunner(store, db.Bun, servicetest.Logger(), projections.RunnerConfig{BatchSize: 3}, createdCounter{})
		if err != nil {
			t.Fatal(err)
		}
		rctx, cancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- runner.Run(rctx) }()
		<-runner.Running()
		time.Sleep(time.Duration(rng.IntN(15)) * time.Millisecond)
		cancel()
		<-done
	}
	projectortest.RunUntilCaughtUp(t, store, db, 3, createdCounter{})

	var rows, sum, maxN int
	if err := db.Bun.NewRaw("SELECT count(*), coalesce(sum(n),0), coalesce(max(n),0) FROM test_event_counts").Scan(ctx, &rows, &sum, &maxN); err != nil {
		t.Fatal(err)
	}
	if created == 0 || rows != created || sum != created || maxN != 1 {
		t.Fatalf("counted %d distinct events with sum %d and max %d per event; the log has %d FeedCreated (each must be applied exactly once)", rows, sum, maxN, created)
	}
	// Events of other types appended while it runs are pages with none of
	// its types: the stored checkpoint must still reach the head, or
	// every restart would read them again.
	runner, err := projections.NewRunner(store, db.Bun, servicetest.Logger(), projections.RunnerConfig{BatchSize: 3, PollInterval: 20 * time.Millisecond}, createdCounter{})
	if err != nil {
		t.Fatal(err)
	}
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- runner.Run(rctx) }()
	<-runner.Running()
	org := uuid.New()
	f, _, err := cmds.CreateFeed(ctx, commands.CreateFeed{Kind: domain.FeedNews, Org: org, Name: "typed", Description: "d"})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		time.Sleep(30 * time.Millisecond) // each rename a page of its own
		name := fmt.Sprintf("renamed %d", i)
		if _, _, err := cmds.UpdateFeed(ctx, commands.UpdateFeed{FeedRef: commands.FeedRef{Kind: domain.FeedNews, Org: org, FeedID: f.ID}, Update: domain.FeedUpdate{Name: &name}}); err != nil {
			t.Fatal(err)
		}
	}
	head := projectortest.HeadPosition(t, db)
	var got eventstore.Position
	if !wait.Within(10*time.Second, func() bool {
		var commit, prepare int64
		if err := db.Bun.NewRaw("SELECT commit_position, prepare_position FROM projection_checkpoints WHERE name = 'created_counter'").Scan(ctx, &commit, &prepare); err != nil {
			t.Fatal(err)
		}
		got = eventstore.Position{Commit: uint64(commit), Prepare: uint64(prepare)}
		return got == head
	}) {
		t.Fatalf("stored checkpoint %s never reached the log's head %s", got, head)
	}
	cancel()
	<-done
	if err := db.Bun.NewRaw("SELECT coalesce(sum(n),0) FROM test_event_counts").Scan(ctx, &sum); err != nil {
		t.Fatal(err)
	}
	if sum != created+1 {
		t.Fatalf("counted %d, want %d", sum, created+1)
	}
}
