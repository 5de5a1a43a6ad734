package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/eventstore"
)

func readStreamReturnsEventsInRevisionOrder(t *testing.T, s eventstore.Store) {
	ctx := context.Background()
	written := numbered(5)
	MustAppend(t, s, "numbers", eventstore.NoStream(), written[:2]...)
	MustAppend(t, s, "noise", eventstore.NoStream(), Event("Noise"))
	MustAppend(t, s, "numbers", eventstore.Exact(1), written[2])
	MustAppend(t, s, "numbers", eventstore.Exact(2), written[3:]...)
	all := dataIDs(written)

	tests := []struct {
		name string
		from uint64
		max  int
		want []uuid.UUID
	}{
		{name: "everything from the start", from: 0, max: 0, want: all},
		{name: "from a revision on", from: 2, max: 100, want: all[2:]},
		{name: "at most max events", from: 1, max: 2, want: all[1:3]},
		{name: "the last event", from: 4, max: 1, want: all[4:]},
		{name: "past the end of an existing stream is empty", from: 5, max: 10, want: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := s.ReadStream(ctx, "numbers", tt.from, tt.max)
			if err != nil {
				t.Fatalf("read stream: %v", err)
			}
			if !slices.Equal(IDs(got), tt.want) {
				t.Fatalf("ids = %v, want %v", IDs(got), tt.want)
			}
			for i, e := range got {
				if e.Revision != tt.from+uint64(i) || e.StreamID != "numbers" || e.Type != "Numbered" {
					t.Errorf("event %d = rev %d stream %s type %s", i, e.Revision, e.StreamID, e.Type)
				}
				var body struct{ I int }
				if err := json.Unmarshal(e.Data, &body); err != nil || body.I != int(e.Revision) {
					t.Errorf("event %d data = %s (%v)", i, e.Data, err)
				}
				if string(e.Metadata) != "{}" || e.RecordedAt.IsZero() {
					t.Errorf("event %d metadata %s recorded at %v", i, e.Metadata, e.RecordedAt)
				}
			}
		})
	}
}

func readStreamOfAStreamWithoutEventsIsNotFound(t *testing.T, s eventstore.Store) {
	for _, from := range []uint64{0, 3} {
		_, err := s.ReadStream(context.Background(), "nothing-here", from, 10)
		if !errors.Is(err, eventstore.ErrStreamNotFound) {
			t.Errorf("from %d: err = %v, want ErrStreamNotFound", from, err)
		}
	}
}

func readAllReturnsTheLogInOrderAndPages(t *testing.T, s eventstore.Store) {
	ctx := context.Background()
	var want []uuid.UUID
	for i := range 7 {
		batch := numbered(1 + i%3)
		MustAppend(t, s, fmt.Sprintf("s-%d", i%3), eventstore.Any(), batch...)
		want = append(want, dataIDs(batch)...)
	}
	everything := ReadAllVisible(t, s, eventstore.Start, len(want))
	if !slices.Equal(IDs(everything), want) {
		t.Fatalf("log = %v, want append order %v", IDs(everything), want)
	}

	for _, page := range []int{1, 3, 5, len(want), len(want) + 1} {
		t.Run(fmt.Sprintf("in pages of %d", page), func(t *testing.T) {
			var got []eventstore.RecordedEvent
			from := eventstore.Start
			for {
				events, err := s.ReadAll(ctx, from, page)
				if err != nil {
					t.Fatalf("read all: %v", err)
				}
				if len(events) > page {
					t.Fatalf("page has %d events, max %d", len(events), page)
				}
				got = append(got, events...)
				if len(got) > len(want) {
					t.Fatalf("paged log has %d events, more than the %d appended: %v", len(got), len(want), IDs(got))
				}
				if len(events) < page {
					break
				}
				from = events[len(events)-1].Position
			}
			if !slices.Equal(IDs(got), want) {
				t.Fatalf("paged log = %v, want %v", IDs(got), want)
			}
			for i := 1; i < len(got); i++ {
				if !got[i-1].Position.Less(got[i].Position) {
					t.Fatalf("position %s is not after %s", got[i].Position, got[i-1].Position)
				}
			}
		})
	}
}
