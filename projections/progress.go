package projections

import (
	"context"
	"sync"
	"time"

	"github.com/feedsvc/feedsvc/eventstore"
)

// Progress is a projector's position as this process sees it, with a way
// to wait for it to pass a point in the log.
type Progress struct {
	mu        sync.Mutex
	pos       eventstore.Position
	processed int64
	err       error
	lastIdle  time.Time
	changed   chan struct{} // closed and replaced on every advance
	want      chan struct{} // a waiter wants a position not yet reached
}

func newProgress() *Progress {
	return &Progress{changed: make(chan struct{}), want: make(chan struct{}, 1)}
}

// Position is the checkpoint last committed.
func (p *Progress) Position() eventstore.Position {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.pos
}

// Processed is how many events of its types this process has read for
// the projector.
func (p *Progress) Processed() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.processed
}

// Err is the error of the last failed batch, nil once a batch succeeds.
func (p *Progress) Err() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.err
}

// CaughtUpAt is when the read began that last found nothing more to read:
// everything committed before then is projected.
func (p *Progress) CaughtUpAt() time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.lastIdle
}

// WaitFor blocks until the projector has committed pos or ctx ends.
func (p *Progress) WaitFor(ctx context.Context, pos eventstore.Position) error {
	for {
		p.mu.Lock()
		reached := !p.pos.Less(pos)
		changed := p.changed
		p.mu.Unlock()
		if reached {
			return nil
		}
		p.nudge()
		// Re-nudge now and then: the read that the nudge triggered may
		// have stopped at the fence, below pos.
		t := time.NewTimer(5 * time.Millisecond)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-changed:
		case <-t.C:
		}
		t.Stop()
	}
}

func (p *Progress) nudge() {
	select {
	case p.want <- struct{}{}:
	default:
	}
}

func (p *Progress) wanted() <-chan struct{} { return p.want }

func (p *Progress) set(pos eventstore.Position) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.pos.Less(pos) || p.pos == (eventstore.Position{}) {
		p.pos = pos
		close(p.changed)
		p.changed = make(chan struct{})
	}
}

func (p *Progress) advance(pos eventstore.Position, n int) {
	p.mu.Lock()
	p.processed += int64(n)
	p.mu.Unlock()
	p.set(pos)
}

func (p *Progress) setErr(err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.err = err
}

// markIdle notes that a read which began at since found the log read to
// its end.
func (p *Progress) markIdle(since time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if since.After(p.lastIdle) {
		p.lastIdle = since
	}
}
