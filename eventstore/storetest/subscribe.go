package storetest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/eventstore"
)

func appendedSignalsListenersAfterEachAppend(t *testing.T, s eventstore.Store) {
	first, stopFirst := s.Appended()
	second, stopSecond := s.Appended()
	defer stopSecond()

	// Two appends with nobody reading coalesce into one pending signal.
	MustAppend(t, s, "a", eventstore.Any(), Event("A"))
	MustAppend(t, s, "a", eventstore.Any(), Event("A"))
	for name, ch := range map[string]<-chan struct{}{"first": first, "second": second} {
		select {
		case <-ch:
		default:
			t.Errorf("%s listener got no signal", name)
		}
		select {
		case <-ch:
			t.Errorf("%s listener got a second signal: sends must coalesce", name)
		default:
		}
	}

	stopFirst()
	stopFirst() // stopping twice is harmless
	MustAppend(t, s, "a", eventstore.Any(), Event("A"))
	select {
	case <-first:
		t.Error("a stopped listener was signalled")
	default:
	}
	select {
	case <-second:
	default:
		t.Error("the remaining listener got no signal")
	}

	if _, err := s.AppendToStream(context.Background(), "a", eventstore.NoStream(), Event("A")); err == nil {
		t.Fatal("conflicting append succeeded")
	}
	select {
	case <-second:
		t.Error("a failed append signalled")
	default:
	}
}

func appendedSignalsOnlyListenersOfTheAppendedTypes(t *testing.T, s eventstore.Store) {
	ofA, stopA := s.Appended("A")
	defer stopA()
	ofBC, stopBC := s.Appended("B", "C")
	defer stopBC()
	ofAll, stopAll := s.Appended()
	defer stopAll()
	signalled := func(ch <-chan struct{}) bool {
		select {
		case <-ch:
			return true
		default:
			return false
		}
	}
	tests := []struct {
		name           string
		events         []eventstore.EventData
		a, bc, anyType bool
	}{
		{"an append of A signals A's listener and the listener of every type", []eventstore.EventData{Event("A")}, true, false, true},
		{"an append of C signals the listener of B and C", []eventstore.EventData{Event("C")}, false, true, true},
		{"an append of D signals only the listener of every type", []eventstore.EventData{Event("D")}, false, false, true},
		{"an append of D and B signals the listener of B", []eventstore.EventData{Event("D"), Event("B")}, false, true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			MustAppend(t, s, "s", eventstore.Any(), tt.events...)
			if got := signalled(ofA); got != tt.a {
				t.Errorf("listener of A signalled: %v, want %v", got, tt.a)
			}
			if got := signalled(ofBC); got != tt.bc {
				t.Errorf("listener of B and C signalled: %v, want %v", got, tt.bc)
			}
			if got := signalled(ofAll); got != tt.anyType {
				t.Errorf("listener of every type signalled: %v, want %v", got, tt.anyType)
			}
		})
	}
}

func subscriptionDeliversEveryConcurrentAppendOnceAndInOrder(t *testing.T, s eventstore.Store) {
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
				batch := numbered(n)
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
		d         = newDelivery()
		appending = make(chan struct{})
	)
	go func() { wg.Wait(); close(appending) }()
	total := -1 // known once every writer is done
	for total < 0 || len(d.got) < total {
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
			d.take(t, e)
		case <-ctx.Done():
			t.Fatalf("received %d events, want %d (-1: writers still running)", len(d.got), total)
		}
	}
	select {
	case err := <-errs:
		t.Fatalf("append: %v", err)
	default:
	}
	for id := range d.got {
		if !appended[id] {
			t.Errorf("delivered event %s that nobody appended", id)
		}
	}
	if len(d.got) != len(appended) {
		t.Fatalf("delivered %d events, appended %d", len(d.got), len(appended))
	}
	ReceiveNothing(t, sub, 100*time.Millisecond)
	t.Logf("%d events from %d writers delivered in order", len(d.got), writers)
}

func subscriptionResumesAfterAGivenPosition(t *testing.T, s eventstore.Store) {
	ctx := context.Background()
	first := numbered(5)
	MustAppend(t, s, "resume", eventstore.NoStream(), first[:3]...)
	MustAppend(t, s, "resume", eventstore.Exact(2), first[3:]...)

	sub, err := s.SubscribeToAll(ctx, eventstore.Start)
	if err != nil {
		t.Fatalf("subscribe: %v", err)
	}
	head := Receive(t, sub, 3)
	sub.Close()

	checkpoint := head[2].Position
	sub, err = s.SubscribeToAll(ctx, checkpoint)
	if err != nil {
		t.Fatalf("resubscribe: %v", err)
	}
	defer sub.Close()
	rest := Receive(t, sub, 2)
	if !slices.Equal(IDs(rest), dataIDs(first[3:])) {
		t.Fatalf("resumed with %v, want %v", IDs(rest), dataIDs(first[3:]))
	}

	live := numbered(2)
	MustAppend(t, s, "resume", eventstore.Exact(4), live...)
	more := Receive(t, sub, 2)
	if !slices.Equal(IDs(more), dataIDs(live)) {
		t.Fatalf("live events %v, want %v", IDs(more), dataIDs(live))
	}
	ReceiveNothing(t, sub, 100*time.Millisecond)
}

func subscriptionEndsWithCloseOrItsContext(t *testing.T, s eventstore.Store) {
	MustAppend(t, s, "x", eventstore.Any(), numbered(3)...)

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
		Receive(t, sub, 3)
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

// Appends from another process wake no listener of this one: the
// subscription has to find them on its own.
func subscriptionFindsAppendsThroughAnotherStore(t *testing.T, s eventstore.Store, reopen func(*testing.T, eventstore.Store) eventstore.Store) {
	if reopen == nil {
		t.Skip("the store's storage cannot be opened a second time")
	}
	other := reopen(t, s)
	sub, err := s.SubscribeToAll(context.Background(), eventstore.Start)
	if err != nil {
		t.Fatalf("subscribe: %v", err)
	}
	defer sub.Close()
	// Once the subscription has found the log empty, only its own rereading
	// can find the events.
	ReceiveNothing(t, sub, 100*time.Millisecond)

	written := numbered(3)
	MustAppend(t, other, "elsewhere", eventstore.NoStream(), written...)
	got := Receive(t, sub, 3)
	if !slices.Equal(IDs(got), dataIDs(written)) {
		t.Fatalf("delivered %v, want %v", IDs(got), dataIDs(written))
	}
}

// delivery checks a subscription's events as they arrive: each once, in
// log order, each stream's revisions consecutive.
type delivery struct {
	got     map[uuid.UUID]bool
	prev    eventstore.Position
	nextRev map[string]uint64
}

func newDelivery() *delivery {
	return &delivery{got: map[uuid.UUID]bool{}, nextRev: map[string]uint64{}}
}

func (d *delivery) take(t testing.TB, e eventstore.RecordedEvent) {
	t.Helper()
	if d.got[e.ID] {
		t.Fatalf("event %s delivered twice", e.ID)
	}
	d.got[e.ID] = true
	if !d.prev.Less(e.Position) {
		t.Fatalf("event at %s delivered after %s", e.Position, d.prev)
	}
	d.prev = e.Position
	if e.Revision != d.nextRev[e.StreamID] {
		t.Fatalf("stream %s: revision %d delivered, want %d", e.StreamID, e.Revision, d.nextRev[e.StreamID])
	}
	d.nextRev[e.StreamID]++
}
