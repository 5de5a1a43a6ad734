package stream_test

import (
	"context"
	"testing"

	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/domain/stream"
	"github.com/feedsvc/feedsvc/eventstore"
)

// collected is an aggregate that keeps what is applied to it.
type collected []domain.Event

func (c *collected) Apply(e domain.Event) { *c = append(*c, e) }

func TestAStreamIsReadDecodedAndFoldedUpToAPosition(t *testing.T) {
	ctx := context.Background()
	store := eventstore.NewMemory()
	id := uuid.New()
	name := domain.HappeningStream(id)
	var positions []eventstore.Position
	for _, e := range []domain.Event{
		domain.HappeningDiscovered{HappeningID: id, Details: domain.HappeningDetails{Title: "first"}},
		domain.HappeningChanged{HappeningID: id, Details: domain.HappeningDetails{Title: "second"}},
		domain.HappeningChanged{HappeningID: id, Details: domain.HappeningDetails{Title: "third"}},
	} {
		data, err := domain.EncodeEvent(e)
		if err != nil {
			t.Fatal(err)
		}
		res, err := store.AppendToStream(ctx, name, eventstore.Any(), eventstore.EventData{ID: uuid.New(), Type: e.EventType(), Data: data})
		if err != nil {
			t.Fatal(err)
		}
		positions = append(positions, res.Position)
	}
	t.Run("a stream is loaded in order with each event decoded", func(t *testing.T) {
		all, err := stream.Load(ctx, store, name)
		if err != nil || len(all) != 3 {
			t.Fatalf("%d events, %v", len(all), err)
		}
		if _, ok := all[0].Event.(domain.HappeningDiscovered); !ok || all[2].Position != positions[2] {
			t.Fatalf("first %T, last at %s", all[0].Event, all[2].Position)
		}
	})
	t.Run("a missing stream has no events", func(t *testing.T) {
		if all, err := stream.Load(ctx, store, domain.HappeningStream(uuid.New())); err != nil || len(all) != 0 {
			t.Fatalf("%d events, %v", len(all), err)
		}
	})
	t.Run("a fold up to a position applies the events up to it and none after", func(t *testing.T) {
		var agg collected
		if err := stream.FoldUntil(ctx, store, name, &agg, positions[1]); err != nil || len(agg) != 2 {
			t.Fatalf("%d applied, %v", len(agg), err)
		}
		var h domain.Happening
		if err := stream.FoldUntil(ctx, store, name, &h, positions[1]); err != nil || h.Details().Title != "second" {
			t.Fatalf("%q, %v", h.Details().Title, err)
		}
	})
}
