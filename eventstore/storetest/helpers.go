package storetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/eventstore"
	"github.com/feedsvc/feedsvc/testkit/wait"
)

// Event returns an event of type typ with a fresh id and small JSON data.
func Event(typ string) eventstore.EventData {
	return eventstore.EventData{ID: uuid.New(), Type: typ, Data: []byte(`{"n":1}`)}
}

// numbered returns n events of type Numbered whose data {"i": i} is their
// index in the batch.
func numbered(n int) []eventstore.EventData {
	out := make([]eventstore.EventData, n)
	for i := range out {
		out[i] = eventstore.EventData{
			ID:   uuid.New(),
			Type: "Numbered",
			Data: []byte(fmt.Sprintf(`{"i":%d}`, i)),
		}
	}
	return out
}

// MustAppend appends events to stream, failing the test on an error.
func MustAppend(t testing.TB, s eventstore.Store, stream string, expected eventstore.ExpectedRevision, events ...eventstore.EventData) eventstore.AppendResult {
	t.Helper()
	res, err := s.AppendToStream(context.Background(), stream, expected, events...)
	if err != nil {
		t.Fatalf("append to %s: %v", stream, err)
	}
	return res
}

// IDs returns the ids of events, in order.
func IDs(events []eventstore.RecordedEvent) []uuid.UUID {
	out := make([]uuid.UUID, len(events))
	for i, e := range events {
		out[i] = e.ID
	}
	return out
}

func dataIDs(events []eventstore.EventData) []uuid.UUID {
	out := make([]uuid.UUID, len(events))
	for i, e := range events {
		out[i] = e.ID
	}
	return out
}

// ReadAllVisible waits until ReadAll returns at least n events after from.
// A store may hold events back for a while (the Postgres fence waits for
// appends still running); waiting keeps the tests about order, not timing.
func ReadAllVisible(t testing.TB, s eventstore.Store, from eventstore.Position, n int) []eventstore.RecordedEvent {
	t.Helper()
	var events []eventstore.RecordedEvent
	visible := wait.Within(10*time.Second, func() bool {
		var err error
		if events, err = s.ReadAll(context.Background(), from, 0); err != nil {
			t.Fatalf("read all: %v", err)
		}
		return len(events) >= n
	})
	if !visible {
		t.Fatalf("read all: got %d events, want %d", len(events), n)
	}
	return events
}

// Receive takes n events from sub, failing the test if they do not arrive
// in time or the subscription ends.
func Receive(t testing.TB, sub *eventstore.Subscription, n int) []eventstore.RecordedEvent {
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

// ReceiveNothing fails if sub delivers an event within d.
func ReceiveNothing(t testing.TB, sub *eventstore.Subscription, d time.Duration) {
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
