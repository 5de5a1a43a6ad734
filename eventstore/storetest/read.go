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

func readAllOfTypesReturnsThoseTypesAndHowFarItRead(t *testing.T, s eventstore.Store) {
	ctx := context.Background()
	types := []string{"A", "B", "A", "C", "A", "B", "C", "C"}
	var appended []eventstore.EventData
	for i, typ := range types {
		e := Event(typ)
		MustAppend(t, s, fmt.Sprintf("s-%d", i%2), eventstore.Any(), e)
		appended = append(appended, e)
	}
	log := ReadAllVisible(t, s, eventstore.Start, len(types))
	ids := func(events []eventstore.RecordedEvent) []uuid.UUID { return IDs(events) }
	of := func(want ...int) []uuid.UUID {
		out := []uuid.UUID{}
		for _, i := range want {
			out = append(out, appended[i].ID)
		}
		return out
	}
	cases := []struct {
		name    string
		from    eventstore.Position
		max     int
		types   []string
		want    []uuid.UUID
		reached eventstore.Position
	}{
		{"all of one type, and the read reached the last event of any type", eventstore.Start, 0, []string{"A"}, of(0, 2, 4), log[7].Position},
		{"several types keep log order", eventstore.Start, 0, []string{"B", "C"}, of(1, 3, 5, 6, 7), log[7].Position},
		{"a full page reached its last event", eventstore.Start, 2, []string{"A"}, of(0, 2), log[2].Position},
		{"a page that is not full reached the end of the log", log[2].Position, 2, []string{"A"}, of(4), log[7].Position},
		{"nothing of the types after from still moves past the others", log[4].Position, 5, []string{"A"}, of(), log[7].Position},
		{"a type nobody appended passes the whole log", eventstore.Start, 3, []string{"Z"}, of(), log[7].Position},
		{"from the end nothing is read and the read stays at from", log[7].Position, 3, []string{"A"}, of(), log[7].Position},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, reached, err := s.ReadAllOfTypes(ctx, c.from, c.max, c.types)
			if err != nil {
				t.Fatalf("read all of types: %v", err)
			}
			if g := ids(got); !slices.Equal(g, c.want) && !(len(g) == 0 && len(c.want) == 0) {
				t.Fatalf("read %v, want %v", g, c.want)
			}
			for _, e := range got {
				if len(e.Data) == 0 || e.StreamID == "" || e.RecordedAt.IsZero() {
					t.Fatalf("event %s came back without its data, stream or time: %+v", e.ID, e)
				}
			}
			if reached != c.reached {
				t.Fatalf("reached %s, want %s", reached, c.reached)
			}
		})
	}
}
