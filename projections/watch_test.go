package projections_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/feedsvc/feedsvc/eventstore"
	"github.com/feedsvc/feedsvc/internal/database"
	"github.com/feedsvc/feedsvc/projections"
	"github.com/feedsvc/feedsvc/testkit/projectortest"
	"github.com/feedsvc/feedsvc/testkit/servicetest"
	"github.com/feedsvc/feedsvc/testkit/testdb"
	"github.com/feedsvc/feedsvc/testkit/wait"
)

// other is a second projector, so that one head watch serves two.
type other struct{ counter }

func (other) Name() string { return "counter_too" }

// Appends of another process wake no subscriber in this one: the runner's
// head watch must see them. A subscriber polls for itself only every 50
// poll intervals (5 s here), so an event projected by both projectors
// within 2 s was seen by the watch.
func TestEventsAppendedByAnotherProcessAreProjectedWithinAFewPollIntervals(t *testing.T) {
	db, _ := testdb.New(t)
	ctx := context.Background()
	if _, err := db.Bun.ExecContext(ctx, "CREATE TABLE test_event_counts (event_id uuid PRIMARY KEY, n int NOT NULL)"); err != nil {
		t.Fatal(err)
	}
	// The runner's store is one of its own, as in another process: appends
	// through the commands' store do not signal it.
	_, cmds := projectortest.Commands(db)
	runner, err := projections.NewRunner(eventstore.NewPostgres(db.Pool), db.Bun, servicetest.Logger(),
		projections.RunnerConfig{PollInterval: 100 * time.Millisecond}, counter{}, other{})
	if err != nil {
		t.Fatal(err)
	}
	rctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- runner.Run(rctx) }()
	defer func() { cancel(); <-done }()
	<-runner.Running()
	waitIdle(t, runner)

	for round := range 3 {
		projectortest.FeedWorkload(t, cmds, uuid.New(), 1)
		waitProjected(t, db, countEvents(t, db), 2*time.Second, "round "+strconv.Itoa(round))
	}
}

// waitIdle waits until both counters of runner have caught up with the
// log and wait for more.
func waitIdle(t *testing.T, runner *projections.Runner) {
	t.Helper()
	wait.Until(t, 30*time.Second, "both projectors to catch up", func() bool {
		return !runner.Progress(counter{}.Name()).CaughtUpAt().IsZero() && !runner.Progress(other{}.Name()).CaughtUpAt().IsZero()
	})
}

// With a listen DSN the watch reads the head when another process
// announces an append, and otherwise only every 25 poll intervals (5 s
// here; a subscriber looks for itself every 10 s): an event appended by
// another process's store is projected within a second or two only
// because its announcement woke the watch.
func TestAnAppendAnnouncedByAnotherProcessIsProjectedLongBeforeTheIdlePoll(t *testing.T) {
	db, dsn := testdb.New(t)
	ctx := context.Background()
	if _, err := db.Bun.ExecContext(ctx, "CREATE TABLE test_event_counts (event_id uuid PRIMARY KEY, n int NOT NULL)"); err != nil {
		t.Fatal(err)
	}
	_, cmds := projectortest.Commands(db)
	stop := runListening(t, db, dsn)
	defer stop()

	for round := range 3 {
		start := time.Now()
		projectortest.FeedWorkload(t, cmds, uuid.New(), 1)
		waitProjected(t, db, countEvents(t, db), 2*time.Second, "round "+strconv.Itoa(round))
		t.Logf("round %d: projected %v after the append", round, time.Since(start).Round(time.Millisecond))
	}
}

// An announced append may not be readable yet: the fence (the oldest
// append still running) holds it back. The watch then reads every poll
// interval until it reaches the announced position, so the event is
// projected soon after the fence moves, not at the next idle poll.
func TestAnAnnouncedAppendHeldBackByTheFenceIsProjectedSoonAfterItMoves(t *testing.T) {
	db, dsn := testdb.New(t)
	ctx := context.Background()
	if _, err := db.Bun.ExecContext(ctx, "CREATE TABLE test_event_counts (event_id uuid PRIMARY KEY, n int NOT NULL)"); err != nil {
		t.Fatal(err)
	}
	_, cmds := projectortest.Commands(db)
	stop := runListening(t, db, dsn)
	defer stop()

	// An append in flight (a transaction with the appenders' lock and an
	// xid), begun before the append, holds the fence below it.
	blocker, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer blocker.Close(ctx)
	tx, err := blocker.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, sql := range []string{"SELECT eventstore_begin_append()", "SELECT pg_current_xact_id()"} {
		if _, err := tx.Exec(ctx, sql); err != nil {
			t.Fatal(err)
		}
	}
	projectortest.FeedWorkload(t, cmds, uuid.New(), 1)
	want := countEvents(t, db)
	// The announcement comes and goes while the event is unreadable.
	if wait.Within(500*time.Millisecond, func() bool { return projectedCount(t, db) != 0 }) {
		t.Fatalf("%d projections while the fence held the events back", projectedCount(t, db))
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	waitProjected(t, db, want, 2*time.Second, "after the fence moved")
}

// runListening runs the two counters with a runner whose store is its own
// (as in another process: the commands' appends do not signal it) and
// whose watch listens on dsn; it returns once they are idle.
func runListening(t *testing.T, db *database.DB, dsn string) (stop func()) {
	t.Helper()
	runner, err := projections.NewRunner(eventstore.NewPostgres(db.Pool), db.Bun, servicetest.Logger(),
		projections.RunnerConfig{PollInterval: 200 * time.Millisecond, ListenDSN: dsn}, counter{}, other{})
	if err != nil {
		t.Fatal(err)
	}
	rctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- runner.Run(rctx) }()
	<-runner.Running()
	// Caught up with the empty log, and listening.
	waitIdle(t, runner)
	wait.Until(t, 30*time.Second, "the head watch to listen", func() bool { return projections.Listening(runner) })
	return func() { cancel(); <-done }
}

func projectedCount(t *testing.T, db *database.DB) int {
	t.Helper()
	var n int
	if err := db.Bun.NewRaw("SELECT coalesce(sum(n), 0) FROM test_event_counts").Scan(context.Background(), &n); err != nil {
		t.Fatal(err)
	}
	return n
}

// waitProjected waits until both counters projected want events each
// (both write into the one table, one row per event each).
func waitProjected(t *testing.T, db *database.DB, want int, within time.Duration, what string) {
	t.Helper()
	if !wait.Within(within, func() bool { return projectedCount(t, db) == 2*want }) {
		t.Fatalf("%s: %d projections of %d events after %v, want %d", what, projectedCount(t, db), want, within, 2*want)
	}
}
