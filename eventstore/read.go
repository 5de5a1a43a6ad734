package eventstore

import (
	"context"
	"errors"
	"fmt"
	"iter"
)

// Events yields a stream's events in revision order, reading page events
// at a time; a stream without events yields none. A read error is yielded
// once and ends the sequence. Breaking out of the loop stops the reading.
func Events(ctx context.Context, s Store, stream string, page int) iter.Seq2[RecordedEvent, error] {
	return func(yield func(RecordedEvent, error) bool) {
		for from := uint64(0); ; {
			recs, err := s.ReadStream(ctx, stream, from, page)
			if errors.Is(err, ErrStreamNotFound) {
				return
			}
			if err != nil {
				yield(RecordedEvent{}, fmt.Errorf("read stream %s: %w", stream, err))
				return
			}
			for _, r := range recs {
				if !yield(r, nil) {
					return
				}
			}
			if len(recs) < page {
				return
			}
			from = recs[len(recs)-1].Revision + 1
		}
	}
}
