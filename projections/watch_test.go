package projections_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/eventstore"
	"github.com/feedsvc/feedsvc/internal/projectortest"
	"github.com/feedsvc/feedsvc/internal/servicetest"
	"github.com/feedsvc/feedsvc/internal/testdb"
	"github.com/feedsvc/feedsvc/projections"
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
	// Both caught up with the empty log, and idle.
	time.Sleep(300 * time.Millisecond)

	for round := range 3 {
		projectortest.FeedWorkload(t, cmds, uuid.New(), 1)
		want := countEvents(t, db)
		deadline := time.Now().Add(2 * time.Second)
		for {
			var n int
			if err := db.Bun.NewRaw("SELECT coalesce(sum(n), 0) FROM test_event_counts").Scan(ctx, &n); err != nil {
				t.Fatal(err)
			}
			// Both projectors write into the one table, one per event each.
			if n == 2*want {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("round %d: %d projections of %d events after 2 s, want %d", round, n, want, 2*want)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}
