// Package stream reads the domain's streams from the event store: each
// event decoded by the domain's registry, and an aggregate folded from its
// stream. It is the one place that does, for the commands (which load
// what they decide on), the webhook dispatcher (an event's details as of
// an add) and the item histories.
package stream

import (
	"context"
	"fmt"
	"iter"
	"math"

	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/eventstore"
)

// page is how many events one read of a stream takes.
const page = 1000

// Recorded is a stored event of a stream with its decoded event.
type Recorded struct {
	eventstore.RecordedEvent
	Event domain.Event
}

// Read yields the events of a stream in revision order, decoded; a stream
// without events yields none. An error (a read, or an event this build
// cannot decode) is yielded once and ends the sequence.
func Read(ctx context.Context, store eventstore.Store, name string) iter.Seq2[Recorded, error] {
	return readUntil(ctx, store, name, end)
}

// end is past every position.
var end = eventstore.Position{Commit: math.MaxUint64, Prepare: math.MaxUint64}

// readUntil is Read of the events up to position at, which stops before
// decoding the first event past it.
func readUntil(ctx context.Context, store eventstore.Store, name string, at eventstore.Position) iter.Seq2[Recorded, error] {
	return func(yield func(Recorded, error) bool) {
		for r, err := range eventstore.Events(ctx, store, name, page) {
			if err != nil {
				yield(Recorded{}, err)
				return
			}
			if at.Less(r.Position) {
				return
			}
			e, err := domain.DecodeEvent(r.Type, r.Data)
			if err != nil {
				yield(Recorded{}, fmt.Errorf("read %s: %w", name, err))
				return
			}
			if !yield(Recorded{RecordedEvent: r, Event: e}, nil) {
				return
			}
		}
	}
}

// Load returns every event of a stream, decoded.
func Load(ctx context.Context, store eventstore.Store, name string) ([]Recorded, error) {
	var all []Recorded
	for r, err := range Read(ctx, store, name) {
		if err != nil {
			return nil, err
		}
		all = append(all, r)
	}
	return all, nil
}

// FoldUntil applies to agg the events of a stream up to position at: the
// aggregate as it stood when the log reached at.
func FoldUntil(ctx context.Context, store eventstore.Store, name string, agg domain.Aggregate, at eventstore.Position) error {
	for r, err := range readUntil(ctx, store, name, at) {
		if err != nil {
			return err
		}
		agg.Apply(r.Event)
	}
	return nil
}
