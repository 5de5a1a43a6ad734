package eventstore

import (
	"context"
	"sync"
)

// fenceShare lets concurrent reads of the log share one computation of the
// fence. Computing it (eventstore_fence(): pg_locks, the appenders'
// backends, the snapshot's ended transactions) was most of a log read's
// cost: an append wakes a dozen projectors, each of which read it for
// itself (a profile at 1,000 polled sites: a third of the Postgres time of
// the process's statements, bench/freshness/README.md).
//
// Why a fence computed for one reader serves another: a fence F computed
// from a snapshot S says that every transaction with an xid below F that
// may have appended had ended by the time F was computed, and its commit
// was visible to S or is visible to any snapshot taken later (see the top
// of postgres.go). So F stays true for ever after: a read whose own
// snapshot is taken after F was computed may read below F and skip
// nothing.
//
// What a reader may not be given is a fence older than its call: an
// append that committed just before the call (its own, or one another
// process announced) would then stay above the fence until the next read.
// So a reader shares only a computation that started after it arrived:
// one already under way when it arrives is waited out, and the readers
// that arrived meanwhile share the next one. A read therefore sees at
// least what reading the fence itself at its arrival would have shown.
type fenceShare struct {
	mu      sync.Mutex
	started uint64     // computations started so far
	current *fenceCall // the computation under way, if any
	last    *fenceCall // the last one that succeeded
}

type fenceCall struct {
	seq   uint64 // its number among the computations started
	done  chan struct{}
	value string
	err   error
}

// get returns a fence computed after the call began, by compute or by a
// concurrent caller's compute.
func (f *fenceShare) get(ctx context.Context, compute func(context.Context) (string, error)) (string, error) {
	f.mu.Lock()
	arrived := f.started
	for {
		if l := f.last; l != nil && l.seq > arrived {
			// Begun after this call and done already.
			f.mu.Unlock()
			return l.value, nil
		}
		c := f.current
		if c == nil {
			break
		}
		// Wait it out, then look again: if it began after this call and
		// succeeded it is f.last now; if it began before, or failed (its
		// caller's context ended, say), a later one serves, or this call
		// computes it.
		f.mu.Unlock()
		select {
		case <-c.done:
		case <-ctx.Done():
			return "", ctx.Err()
		}
		f.mu.Lock()
	}
	f.started++
	c := &fenceCall{seq: f.started, done: make(chan struct{})}
	f.current = c
	f.mu.Unlock()

	c.value, c.err = compute(ctx)

	f.mu.Lock()
	f.current = nil
	if c.err == nil {
		f.last = c
	}
	f.mu.Unlock()
	close(c.done)
	return c.value, c.err
}
