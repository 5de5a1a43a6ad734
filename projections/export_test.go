package projections

import (
	"context"
	"log/slog"
	"time"

	"github.com/feedsvc/feedsvc/eventstore"
)

// Listening reports whether r's head watch hears announced appends, for
// tests that must not append before it does.
func Listening(r *Runner) bool {
	r.watch.mu.Lock()
	defer r.watch.mu.Unlock()
	return r.watch.listening
}

// HeadWatch is the runner's head watch, for tests of it with a real store.
type HeadWatch = headWatch

// NewHeadWatch starts a head watch on store until ctx ends.
func NewHeadWatch(ctx context.Context, store eventstore.Store, interval time.Duration) *HeadWatch {
	w := newHeadWatch(store, interval, "", slog.New(slog.DiscardHandler))
	go w.run(ctx)
	return w
}

// Head is how far the watch has read.
func (w *HeadWatch) Head() eventstore.Position {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.head
}

// After is what a subscriber of types caught up to pos waits on.
func (w *HeadWatch) After(pos eventstore.Position, types []string) (<-chan struct{}, func()) {
	return w.after(pos, types)
}
