package eventstore_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/eventstore"
)

// receive takes n events from sub, failing the test if they do not arrive
// in time or the subscription ends.
func receive(t *testing.T, sub *eventstore.Subscription, n int) []eventstore.RecordedEvent {
	t.Helper()
	timeout := time.After(10 * time.Second)
	var got []eventstore.RecordedEvent
	for len(got) < n {
		select {
		case e, ok := <-sub.Events():
			if !ok {
				t.Fatalf("subscription ended after %d of %d events: %v", len(got), n, sub.Err())
			}
			got = append(got, e)
		case <-timeout:
			t.Fatalf("received %d of %d events", len(got), n)
		}
	}
	return got
}

// receiveNothing fails if sub delivers an event within d.
func receiveNothing(t *testing.T, sub *eventstore.Subscription, d time.Duration) {
	t.Helper()
	select {
	case e, ok := <-sub.Events():
		if ok {
			t.Fatalf("unexpected event %s (%s) at %s", e.ID, e.Type, e.Position)
		}
		t.Fatalf("subscription ended: %v", sub.Err())
	case <-time.After(d):
	}
}

func TestSubscriptionDeliversEveryConcurrentAppendOnceAndInOrder(t *testing.T) {
	s, _, _ := newStore(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	sub, err := s.SubscribeToAll(ctx, eventstore.Start)
	if err != nil {
		t.Fatalf("subscribe: %v", err)
	}
	defer sub.Close()

	const (
		writers          = 32
		appendsPerWriter = 40
		sharedStreams    = 3
	)
	var (
		mu       sync.Mutex
		appended = make(map[uuid.UUID]bool)
		wg       sync.WaitGroup
		errs     = make(chan error, writers)
	)
	for w := range writers {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(w), 1))
			// Every fourth writer shares streams with others under Any;
			// the rest own a stream and append as a command would.
			shared := w%4 == 0
			own := fmt.Sprintf("own-%d", w)
			var last uint64
			for i := range appendsPerWriter {
				n := 1
				if rng.IntN(4) == 0 {
					n = 2 + rng.IntN(20)
				}
				batch := newEvents(n)
				var (
					res eventstore.AppendResult
					err error
				)
				switch {
				case shared:
					res, err = s.AppendToStream(ctx, fmt.Sprintf("shared-%d", rng.IntN(sharedStreams)), eventstore.Any(), batch...)
				case i == 0:
					res, err = s.AppendToStream(ctx, own, eventstore.NoStream(), batch...)
				default:
					res, err = s.AppendToStream(ctx, own, eventstore.Exact(last), batch...)
				}
				if err != nil {
					errs <- err
					return
				}
				last = res.NextExpectedRevision
				mu.Lock()
				for _, e := range batch {
					appended[e.ID] = true
				}
				mu.Unlock()
			}
		})
	}

	var (
		got       = make(map[uuid.UUID]bool)
		prev      eventstore.Position
		nextRev   = make(map[string]uint64)
		appending = make(chan struct{})
	)
	go func() { wg.Wait(); close(appending) }()
	total := -1 // known once every writer is done
	for total < 0 || len(got) < total {
		select {
		case <-appending:
			appending = nil
			mu.Lock()
			total = len(appended)
			mu.Unlock()
		case err := <-errs:
			t.Fatalf("append: %v", err)
		case e, ok := <-sub.Events():
			if !ok {
				t.Fatalf("subscription ended: %v", sub.Err())
			}
			if got[e.ID] {
				t.Fatalf("event %s delivered twice", e.ID)
			}
			got[e.ID] = true
			if !prev.Less(e.Position) {
				t.Fatalf("event at %s delivered after %s", e.Position, prev)
			}
			prev = e.Position
			if e.Revision != nextRev[e.StreamID] {
				t.Fatalf("stream %s: revision %d delivered, want %d", e.StreamID, e.Revision, nextRev[e.StreamID])
			}
			nextRev[e.StreamID]++
		case <-ctx.Done():
			t.Fatalf("received %d events, want %d (-1: writers still running)", len(got), total)
		}
	}
	select {
	case err := <-errs:
		t.Fatalf("append: %v", err)
	default:
	}
	for id := range got {
		if !appended[id] {
			t.Errorf("delivered event %s that nobody appended", id)
		}
	}
	if len(got) != len(appended) {
		t.Fatalf("delivered %d events, appended %d", len(got), len(appended))
	}
	receiveNothing(t, sub, 100*time.Millisecond)
	t.Logf("%d events from %d writers delivered in order", len(got), writers)
}

func TestSubscriptionResumesAfterAGivenPosition(t *testing.T) {
	s, _, _ := newStore(t)
	ctx := context.Background()
	first := newEvents(5)
	mustAppend(t, s, "resume", eventstore.NoStream(), first[:3]...)
	mustAppend(t, s, "resume", eventstore.Exact(2), first[3:]...)

	sub, err := s.SubscribeToAll(ctx, eventstore.Start)
	if err != nil {
		t.Fatalf("subscribe: %v", err)
	}
	head := receive(t, sub, 3)
	sub.Close()

	checkpoint := head[2].Position
	sub, err = s.SubscribeToAll(ctx, checkpoint)
	if err != nil {
		t.Fatalf("resubscribe: %v", err)
	}
	defer sub.Close()
	rest := receive(t, sub, 2)
	if !equalIDs(ids(rest), dataIDs(first[3:])) {
		t.Fatalf("resumed with %v, want %v", ids(rest), dataIDs(first[3:]))
	}

	live := newEvents(2)
	mustAppend(t, s, "resume", eventstore.Exact(4), live...)
	more := receive(t, sub, 2)
	if !equalIDs(ids(more), dataIDs(live)) {
		t.Fatalf("live events %v, want %v", ids(more), dataIDs(live))
	}
	receiveNothing(t, sub, 100*time.Millisecond)
}

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
	late := newEvent("Late")
	mustAppend(t, s, "late", eventstore.NoStream(), late)

	// Several poll intervals pass with the fence held back.
	receiveNothing(t, sub, 150*time.Millisecond)

	if err := early.Commit(ctx); err != nil {
		t.Fatalf("commit: %v", err)
	}
	got := receive(t, sub, 2)
	if !equalIDs(ids(got), []uuid.UUID{earlyID, late.ID}) {
		t.Fatalf("delivered %v, want the early event first: %v", ids(got), []uuid.UUID{earlyID, late.ID})
	}
}

func TestSubscriptionEndsWithCloseOrItsContext(t *testing.T) {
	s, _, _ := newStore(t)
	mustAppend(t, s, "x", eventstore.Any(), newEvents(3)...)

	t.Run("close ends it without an error", func(t *testing.T) {
		sub, err := s.SubscribeToAll(context.Background(), eventstore.Start)
		if err != nil {
			t.Fatalf("subscribe: %v", err)
		}
		sub.Close() // nobody is reading: Close must not wait for a reader
		sub.Close()
		for range sub.Events() {
		}
		if err := sub.Err(); err != nil {
			t.Errorf("Err after Close = %v, want nil", err)
		}
	})

	t.Run("the context ending ends it with the context's error", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		sub, err := s.SubscribeToAll(ctx, eventstore.Start)
		if err != nil {
			t.Fatalf("subscribe: %v", err)
		}
		receive(t, sub, 3)
		cancel()
		for range sub.Events() {
		}
		if err := sub.Err(); !errors.Is(err, context.Canceled) {
			t.Errorf("Err = %v, want context.Canceled", err)
		}
	})

	t.Run("an ended context refuses to subscribe", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if _, err := s.SubscribeToAll(ctx, eventstore.Start); !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v, want context.Canceled", err)
		}
	})
}
