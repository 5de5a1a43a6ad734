package webhook

import (
	"context"
	"errors"
	"time"
)

// errStopped answers a request made after the sender closed.
var errStopped = errors.New("the webhook sender is closed")

// batcher coalesces what concurrent attempts ask of the database into one
// statement per batch: River runs up to Concurrency attempts at once, and
// one round trip (and one plan, one commit) per attempt for its load and
// for its record was most of what a delivery cost Postgres (issue 22).
//
// A few lanes each take the first request waiting and whatever else is
// queued behind it, up to max, run them together and answer each. An idle
// process runs a lone request at once (no timer, no added latency); under
// load the requests that arrive while a lane is busy form its next batch.
type batcher[Req, Res any] struct {
	calls chan call[Req, Res]
	max   int
	run   func(ctx context.Context, reqs []Req) ([]Res, error)
	quit  chan struct{}
}

type call[Req, Res any] struct {
	req   Req
	reply chan reply[Res]
}

type reply[Res any] struct {
	res Res
	err error
}

// batchTimeout bounds one batch's statement: a caller that gives up
// earlier is answered nothing, and the statement is not cancelled for the
// others in its batch.
const batchTimeout = 10 * time.Second

func newBatcher[Req, Res any](lanes, max int, run func(context.Context, []Req) ([]Res, error)) *batcher[Req, Res] {
	b := &batcher[Req, Res]{calls: make(chan call[Req, Res]), max: max, run: run, quit: make(chan struct{})}
	for range lanes {
		go b.lane()
	}
	return b
}

// do runs req in the next batch and returns its result.
func (b *batcher[Req, Res]) do(ctx context.Context, req Req) (Res, error) {
	c := call[Req, Res]{req: req, reply: make(chan reply[Res], 1)}
	var zero Res
	select {
	case b.calls <- c:
	case <-ctx.Done():
		return zero, ctx.Err()
	case <-b.quit:
		return zero, errStopped
	}
	select {
	case r := <-c.reply:
		return r.res, r.err
	case <-ctx.Done():
		return zero, ctx.Err()
	}
}

func (b *batcher[Req, Res]) lane() {
	calls := make([]call[Req, Res], 0, b.max)
	reqs := make([]Req, 0, b.max)
	for {
		calls, reqs = calls[:0], reqs[:0]
		select {
		case c := <-b.calls:
			calls = append(calls, c)
		case <-b.quit:
			return
		}
	more:
		for len(calls) < b.max {
			select {
			case c := <-b.calls:
				calls = append(calls, c)
			default:
				break more
			}
		}
		for _, c := range calls {
			reqs = append(reqs, c.req)
		}
		ctx, cancel := context.WithTimeout(context.Background(), batchTimeout)
		res, err := b.run(ctx, reqs)
		cancel()
		for i, c := range calls {
			var r reply[Res]
			if err != nil {
				r.err = err
			} else {
				r.res = res[i]
			}
			c.reply <- r
		}
	}
}

// stop ends the lanes; requests after it fail.
func (b *batcher[Req, Res]) stop() { close(b.quit) }
