package projections

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/uptrace/bun"

	"github.com/feedsvc/feedsvc/eventstore"
)

// Waiter makes writes read-after-write consistent (D6): a command's caller
// waits until every projector that reads the written event types has
// committed past the write's position.
type Waiter struct {
	db       *bun.DB
	runner   *Runner
	readers  map[string][]string // event type -> projector names
	timeout  time.Duration
	interval time.Duration
}

// NewWaiter waits on runner's in-process progress where it can, and polls
// the checkpoint table for projectors that run in other processes.
func NewWaiter(db *bun.DB, runner *Runner, timeout time.Duration, projectors ...Projector) *Waiter {
	readers := map[string][]string{}
	for _, p := range projectors {
		for _, t := range EventTypes(p) {
			readers[t] = append(readers[t], p.Name())
		}
	}
	return &Waiter{db: db, runner: runner, readers: readers, timeout: timeout, interval: 10 * time.Millisecond}
}

// WaitsFor names the projectors w waits for, sorted.
func (w *Waiter) WaitsFor() []string {
	var out []string
	for _, names := range w.readers {
		for _, name := range names {
			if !slices.Contains(out, name) {
				out = append(out, name)
			}
		}
	}
	slices.Sort(out)
	return out
}

// Wait blocks until the projectors reading eventTypes reached pos. When
// its timeout passes first, the error wraps context.DeadlineExceeded
// (commands.Visible reports it as commands.ErrLagging).
func (w *Waiter) Wait(ctx context.Context, pos eventstore.Position, eventTypes []string) error {
	if len(eventTypes) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, w.timeout)
	defer cancel()
	seen := map[string]bool{}
	for _, t := range eventTypes {
		for _, name := range w.readers[t] {
			if seen[name] {
				continue
			}
			seen[name] = true
			if err := w.waitOne(ctx, name, pos); err != nil {
				return fmt.Errorf("projector %s did not reach %s within %s: %w", name, pos, w.timeout, err)
			}
		}
	}
	return nil
}

func (w *Waiter) waitOne(ctx context.Context, name string, pos eventstore.Position) error {
	if w.runner != nil {
		if p := w.runner.Progress(name); p != nil {
			return p.WaitFor(ctx, pos)
		}
	}
	for {
		if reached, err := readCheckpoint(ctx, w.db, name); err == nil && !reached.Less(pos) {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		sleep(ctx, w.interval)
	}
}
