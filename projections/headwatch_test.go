package projections

import (
	"log/slog"
	"testing"
	"time"

	"github.com/feedsvc/feedsvc/eventstore"
)

// A subscriber waits at the position it read to; when another reads
// further, the head is known to be further and the waiter has events to
// read: it must be woken then, since the watch's next read starts from
// the new head and will not see it move past the waiter (it waited for
// its own poll, 50 intervals, before). This is the watch of a store that
// cannot name the types it appended.
func TestAWaiterBehindAPositionAnotherSubscriberReachedIsWoken(t *testing.T) {
	w := newHeadWatch(nil, time.Second, "", slog.New(slog.DiscardHandler))
	at := func(n uint64) eventstore.Position { return eventstore.Position{Commit: n, Prepare: n} }
	behind, _ := w.after(at(10), nil)
	select {
	case <-behind:
		t.Fatal("a waiter at the head was woken before the head moved")
	default:
	}
	if ahead, _ := w.after(at(12), nil); isClosed(ahead) {
		t.Fatal("the subscriber that read furthest was woken: nothing is past it")
	}
	if !isClosed(behind) {
		t.Fatal("the waiter behind the position another subscriber reached was not woken")
	}
	if c, _ := w.after(at(11), nil); !isClosed(c) {
		t.Fatal("a subscriber arriving behind the known head waits instead of reading")
	}
}

func isClosed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}
