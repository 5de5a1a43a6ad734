package eventstore_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/eventstore"
	"github.com/feedsvc/feedsvc/eventstore/storetest"
)

func TestSubscriptionWaitsForAnOlderTransactionToCommit(t *testing.T) {
	s, db, _ := newStore(t)
	ctx := context.Background()
	sub, err := s.SubscribeToAll(ctx, eventstore.Start)
	if err != nil {
		t.Fatalf("subscribe: %v", err)
	}
	defer sub.Close()

	early, err := db.Pool.Begin(ctx)
	if err != nil {
		t.Fatalf("begin: %v", err)
	}
	defer early.Rollback(ctx) //nolint:errcheck // no-op after commit
	earlyID := uuid.New()
	if _, err := early.Exec(ctx,
		`INSERT INTO events (stream_id, stream_revision, event_id, event_type, data) VALUES ('early', 0, $1, 'Early', '{}')`,
		earlyID); err != nil {
		t.Fatalf("insert in the open transaction: %v", err)
	}
	late := storetest.Event("Late")
	storetest.MustAppend(t, s, "late", eventstore.NoStream(), late)

	// Several poll intervals pass with the fence held back.
	storetest.ReceiveNothing(t, sub, 150*time.Millisecond)

	if err := early.Commit(ctx); err != nil {
		t.Fatalf("commit: %v", err)
	}
	got := storetest.Receive(t, sub, 2)
	if !slices.Equal(storetest.IDs(got), []uuid.UUID{earlyID, late.ID}) {
		t.Fatalf("delivered %v, want the early event first: %v", storetest.IDs(got), []uuid.UUID{earlyID, late.ID})
	}
}
