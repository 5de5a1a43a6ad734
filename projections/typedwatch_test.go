package projections_test

import (
	"context"
	"testing"
	"time"

	"github.com/feedsvc/feedsvc/eventstore"
	"github.com/feedsvc/feedsvc/eventstore/migrations"
	"github.com/feedsvc/feedsvc/eventstore/storetest"
	"github.com/feedsvc/feedsvc/projections"
	"github.com/feedsvc/feedsvc/testkit/testdb"
)

// On the Postgres store the watch reads the types the log moved by and
// wakes only their subscribers: an append of one type no longer costs
// every projector a read and a checkpoint write. The appends here come
// from another store on the same database, as another process's would,
// so that nothing but the watch can wake the waiters.
func TestTheWatchWakesOnlyTheSubscribersOfTheTypesTheLogMovedBy(t *testing.T) {
	db, _ := testdb.NewFor(t, migrations.Owner)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	other := eventstore.NewPostgres(db.Pool)
	if _, err := other.AppendToStream(ctx, "before", eventstore.Any(), storetest.Event("A")); err != nil {
		t.Fatal(err)
	}
	w := projections.NewHeadWatch(ctx, eventstore.NewPostgres(db.Pool), 20*time.Millisecond)
	// The first read learns the head.
	deadline := time.Now().Add(10 * time.Second)
	for w.Head() == (eventstore.Position{}) {
		if time.Now().After(deadline) {
			t.Fatal("the watch never read the head")
		}
		time.Sleep(5 * time.Millisecond)
	}
	head := w.Head()

	ofA, stopA := w.After(head, []string{"A"})
	defer stopA()
	ofB, stopB := w.After(head, []string{"B", "C"})
	defer stopB()
	ofAll, stopAll := w.After(head, nil)
	defer stopAll()
	if _, err := other.AppendToStream(ctx, "s", eventstore.Any(), storetest.Event("C")); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		ch   <-chan struct{}
	}{{"a subscriber of the appended type", ofB}, {"a subscriber of every type", ofAll}} {
		select {
		case <-c.ch:
		case <-time.After(10 * time.Second):
			t.Fatalf("%s was not woken", c.name)
		}
	}
	// The watch has read past the append: a subscriber of another type
	// was not woken by it.
	if func() bool {
		select {
		case <-ofA:
			return true
		default:
			return false
		}
	}() {
		t.Fatal("a subscriber of another type was woken")
	}
	if _, err := other.AppendToStream(ctx, "s", eventstore.Any(), storetest.Event("A")); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ofA:
	case <-time.After(10 * time.Second):
		t.Fatal("the subscriber of A was not woken by an A")
	}
}
