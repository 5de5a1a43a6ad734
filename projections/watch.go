package projections

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/feedsvc/feedsvc/eventstore"
)

// noType is an event type no event has: reading the log for it reads only
// its head.
const noType = "(no event type)"

// watchFallback is how many poll intervals a subscriber of a runner waits
// for the watch before it looks for itself (the watch's reads failing).
const watchFallback = 50

// headWatch looks for events appended by other processes on behalf of
// every subscriber of a runner: one read of the log's head (below the
// fence, as every read) each poll interval, instead of one read per
// projector, which with a dozen projectors was most of an idle process's
// statements. A subscriber that has caught up waits until the head is
// past its position (after); appends in this process still wake the
// subscribers of their types at once (eventstore.Appended).
type headWatch struct {
	store    eventstore.Store
	interval time.Duration
	logger   *slog.Logger

	mu sync.Mutex
	// head is the furthest position known to be readable: what the
	// watch's last read reached, or a subscriber's, whichever is further.
	head eventstore.Position
	// moved is closed, and replaced, when a read of the watch finds the
	// head further than it knew.
	moved chan struct{}
}

func newHeadWatch(store eventstore.Store, interval time.Duration, logger *slog.Logger) *headWatch {
	return &headWatch{store: store, interval: interval, logger: logger, moved: make(chan struct{})}
}

// after returns a channel that is closed once the head is past pos, the
// position a subscriber caught up to (at once when it already is).
func (w *headWatch) after(pos eventstore.Position) <-chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.head.Less(pos) {
		// The subscriber read further than the watch: the head is there
		// at least, and reading on from it costs less. The subscribers
		// waiting at lower positions have events to read: they are woken,
		// since the watch will not see the head move past them now.
		w.head = pos
		close(w.moved)
		w.moved = make(chan struct{})
	}
	if pos.Less(w.head) {
		return closed
	}
	return w.moved
}

var closed = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// run reads the head every interval until ctx ends. A failed read is
// retried at the next; the subscribers' fallback covers a watch that
// keeps failing.
func (w *headWatch) run(ctx context.Context) {
	t := time.NewTicker(w.interval)
	defer t.Stop()
	failing := false
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		w.mu.Lock()
		from := w.head
		w.mu.Unlock()
		_, head, err := w.store.ReadAllOfTypes(ctx, from, 1, []string{noType})
		if err != nil {
			// Logged when it starts failing, not on every read.
			if !failing && ctx.Err() == nil {
				w.logger.Warn("reading the event log's head failed; projectors look for events themselves meanwhile", "err", err)
			}
			failing = true
			continue
		}
		failing = false
		w.mu.Lock()
		if w.head.Less(head) {
			w.head = head
			close(w.moved)
			w.moved = make(chan struct{})
		}
		w.mu.Unlock()
	}
}
