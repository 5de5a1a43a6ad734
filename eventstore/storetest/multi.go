package storetest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/feedsvc/feedsvc/eventstore"
)

// part is a StreamAppend, shorter to write.
func part(stream string, expected eventstore.ExpectedRevision, events ...eventstore.EventData) eventstore.StreamAppend {
	return eventstore.StreamAppend{Stream: stream, Expected: expected, Events: events}
}

// streamLength is how many events stream holds (0 when it has none).
func streamLength(t *testing.T, s eventstore.Store, stream string) int {
	t.Helper()
	got, err := s.ReadStream(context.Background(), stream, 0, 0)
	if err != nil && !errors.Is(err, eventstore.ErrStreamNotFound) {
		t.Fatalf("read %s: %v", stream, err)
	}
	return len(got)
}

func appendToStreamsStoresEveryPartInOneCommitInOrder(t *testing.T, s eventstore.Store) {
	ctx := context.Background()
	MustAppend(t, s, "multi-existing", eventstore.NoStream(), numbered(2)...)
	MustAppend(t, s, "multi-hot", eventstore.NoStream(), numbered(1)...)
	before := ReadAllVisible(t, s, eventstore.Start, 3)
	from := before[len(before)-1].Position

	fresh, existing, hot := numbered(2), numbered(1), numbered(3)
	results, err := s.AppendToStreams(ctx,
		part("multi-new", eventstore.NoStream(), fresh...),
		part("multi-existing", eventstore.Exact(1), existing...),
		part("multi-hot", eventstore.Any(), hot...),
	)
	if err != nil {
		t.Fatalf("append to streams: %v", err)
	}
	if len(results) != 3 || results[0].NextExpectedRevision != 1 || results[1].NextExpectedRevision != 2 || results[2].NextExpectedRevision != 3 {
		t.Fatalf("results = %+v, want next revisions 1, 2, 3", results)
	}
	got := ReadAllVisible(t, s, from, 6)
	want := slices.Concat(dataIDs(fresh), dataIDs(existing), dataIDs(hot))
	if !slices.Equal(IDs(got), want) {
		t.Fatalf("log after the append = %v, want the parts' events in the parts' order %v", IDs(got), want)
	}
	for _, e := range got {
		// One commit: a reader sees all of it or none of it.
		if e.Position.Commit != got[0].Position.Commit {
			t.Errorf("event %s of stream %s commits at %d, the first at %d: want one commit", e.ID, e.StreamID, e.Position.Commit, got[0].Position.Commit)
		}
	}
	for i, r := range results {
		last := got[[]int{1, 2, 5}[i]]
		if r.Position != last.Position {
			t.Errorf("part %d: position %s, want its last event's %s", i, r.Position, last.Position)
		}
	}
	if n := streamLength(t, s, "multi-existing"); n != 3 {
		t.Errorf("multi-existing has %d events, want 3", n)
	}
}

func appendToStreamsWritesNothingWhenAnExpectationFails(t *testing.T, s eventstore.Store) {
	ctx := context.Background()
	tests := []struct {
		name string
		// The parts, on streams prefixed with the case's name; "taken" has
		// two events before the append.
		parts func(p string) []eventstore.StreamAppend
		// conflicts are the streams (unprefixed) Conflicts must report,
		// with the actual revision and whether they exist.
		conflicts map[string]int
	}{
		{
			name: "no stream on an existing stream",
			parts: func(p string) []eventstore.StreamAppend {
				return []eventstore.StreamAppend{part(p+"new", eventstore.NoStream(), numbered(1)...), part(p+"taken", eventstore.NoStream(), numbered(1)...)}
			},
			conflicts: map[string]int{"taken": 1},
		},
		{
			name: "exact below the last revision, in the first part",
			parts: func(p string) []eventstore.StreamAppend {
				return []eventstore.StreamAppend{part(p+"taken", eventstore.Exact(0), numbered(1)...), part(p+"new", eventstore.Any(), numbered(2)...)}
			},
			conflicts: map[string]int{"taken": 1},
		},
		{
			name: "two parts fail and both are reported",
			parts: func(p string) []eventstore.StreamAppend {
				return []eventstore.StreamAppend{
					part(p+"new", eventstore.StreamExists(), numbered(1)...),
					part(p+"other", eventstore.NoStream(), numbered(1)...),
					part(p+"taken", eventstore.Exact(7), numbered(1)...),
				}
			},
			conflicts: map[string]int{"new": -1, "taken": 1},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := tt.name + "/"
			MustAppend(t, s, p+"taken", eventstore.NoStream(), numbered(2)...)
			parts := tt.parts(p)
			_, err := s.AppendToStreams(ctx, parts...)
			if !errors.Is(err, eventstore.ErrWrongExpectedVersion) {
				t.Fatalf("err = %v, want ErrWrongExpectedVersion", err)
			}
			got := map[string]int{}
			for _, c := range eventstore.Conflicts(err) {
				actual := int(c.Actual)
				if !c.HasActual {
					actual = -1
				}
				got[c.Stream[len(p):]] = actual
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.conflicts) {
				t.Errorf("conflicts (stream: actual revision, -1 none) = %v, want %v", got, tt.conflicts)
			}
			for _, a := range parts {
				want := 0
				if a.Stream == p+"taken" {
					want = 2
				}
				if n := streamLength(t, s, a.Stream); n != want {
					t.Errorf("%s has %d events after the failed append, want %d: a multi-stream append is all or nothing", a.Stream, n, want)
				}
			}
		})
	}
}

func appendingTheSameMultiStreamAppendAgainIsIdempotent(t *testing.T, s eventstore.Store) {
	ctx := context.Background()
	a, b := numbered(2), numbered(1)
	parts := []eventstore.StreamAppend{part("again-a", eventstore.NoStream(), a...), part("again-b", eventstore.NoStream(), b...)}
	first, err := s.AppendToStreams(ctx, parts...)
	if err != nil {
		t.Fatalf("first append: %v", err)
	}
	// The reply was lost, say, and the caller sends the same append.
	second, err := s.AppendToStreams(ctx, parts...)
	if err != nil {
		t.Fatalf("the same append again: %v", err)
	}
	if !slices.Equal(first, second) {
		t.Errorf("results again = %+v, want the first %+v", second, first)
	}
	if streamLength(t, s, "again-a") != 2 || streamLength(t, s, "again-b") != 1 {
		t.Errorf("the append again stored events twice")
	}

	// A part stored before, beside a new part: the stored one is that
	// append retried, the new one is appended.
	c := numbered(1)
	res, err := s.AppendToStreams(ctx, parts[0], part("again-c", eventstore.NoStream(), c...))
	if err != nil {
		t.Fatalf("a stored part beside a new one: %v", err)
	}
	if res[0] != first[0] || res[1].NextExpectedRevision != 0 || streamLength(t, s, "again-c") != 1 || streamLength(t, s, "again-a") != 2 {
		t.Errorf("results %+v: want the stored part's first result %+v and again-c appended once", res, first[0])
	}
}

func appendToStreamsRefusesWhatIsNotOneAppend(t *testing.T, s eventstore.Store) {
	ctx := context.Background()
	MustAppend(t, s, "refuse-stored", eventstore.NoStream(), numbered(1)...)
	stored, err := s.ReadStream(ctx, "refuse-stored", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	shared := Event("Shared")
	tests := []struct {
		name  string
		parts []eventstore.StreamAppend
		want  error
	}{
		{"a part without events", []eventstore.StreamAppend{part("refuse-1", eventstore.Any(), numbered(1)...), part("refuse-2", eventstore.Any())}, eventstore.ErrInvalidAppend},
		{"a stream named twice", []eventstore.StreamAppend{part("refuse-1", eventstore.Any(), numbered(1)...), part("refuse-1", eventstore.Any(), numbered(1)...)}, eventstore.ErrInvalidAppend},
		{"an event id in two parts", []eventstore.StreamAppend{part("refuse-1", eventstore.Any(), shared), part("refuse-2", eventstore.Any(), shared)}, eventstore.ErrDuplicateEventID},
		{"an event id stored in another stream", []eventstore.StreamAppend{
			part("refuse-1", eventstore.Any(), numbered(1)...),
			part("refuse-2", eventstore.Any(), eventstore.EventData{ID: stored[0].ID, Type: "Numbered", Data: []byte(`{}`)}),
		}, eventstore.ErrDuplicateEventID},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := s.AppendToStreams(ctx, tt.parts...); !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
			if streamLength(t, s, "refuse-1") != 0 || streamLength(t, s, "refuse-2") != 0 {
				t.Errorf("a refused append wrote events")
			}
		})
	}
}

// Writers race for one stream with Exact, each also creating a stream of
// its own: one wins, and a loser's own stream is not created either.
func concurrentMultiStreamAppendsOnOneStreamLetExactlyOneWin(t *testing.T, s eventstore.Store) {
	MustAppend(t, s, "multi-contended", eventstore.NoStream(), Event("Created"))
	const writers = 8
	var (
		wg     sync.WaitGroup
		mu     sync.Mutex
		winner = -1
		wins   int
		others []error
	)
	start := make(chan struct{})
	for w := range writers {
		wg.Go(func() {
			<-start
			_, err := s.AppendToStreams(context.Background(),
				part(fmt.Sprintf("multi-own-%d", w), eventstore.NoStream(), Event("Own")),
				part("multi-contended", eventstore.Exact(0), Event("Changed")),
			)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				wins++
				winner = w
			case errors.Is(err, eventstore.ErrWrongExpectedVersion):
				if c := eventstore.Conflicts(err); len(c) != 1 || c[0].Stream != "multi-contended" || c[0].Actual != 1 {
					others = append(others, fmt.Errorf("conflicts %v, want multi-contended at 1", c))
				}
			default:
				others = append(others, err)
			}
		})
	}
	close(start)
	wg.Wait()
	if wins != 1 || len(others) != 0 {
		t.Fatalf("wins %d, other errors %v; want one win and conflicts", wins, others)
	}
	for w := range writers {
		want := 0
		if w == winner {
			want = 1
		}
		if n := streamLength(t, s, fmt.Sprintf("multi-own-%d", w)); n != want {
			t.Errorf("writer %d's own stream has %d events, want %d", w, n, want)
		}
	}
}

// Writers append Any to one hot stream, each with a stream of its own:
// all succeed, taking turns.
func concurrentMultiStreamAnyAppendsAllSucceed(t *testing.T, s eventstore.Store) {
	const writers = 8
	var wg sync.WaitGroup
	errs := make([]error, writers)
	start := make(chan struct{})
	for w := range writers {
		wg.Go(func() {
			<-start
			_, errs[w] = s.AppendToStreams(context.Background(),
				part("multi-hot-any", eventstore.Any(), Event("Hot")),
				part(fmt.Sprintf("multi-any-own-%d", w), eventstore.NoStream(), Event("Own")),
			)
		})
	}
	close(start)
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatalf("concurrent Any appends: %v", err)
	}
	if n := streamLength(t, s, "multi-hot-any"); n != writers {
		t.Errorf("hot stream has %d events, want %d", n, writers)
	}
}

func appendedSignalsListenersOfAnyPartOfAMultiStreamAppend(t *testing.T, s eventstore.Store) {
	ch, stop := s.Appended("Second")
	defer stop()
	if _, err := s.AppendToStreams(context.Background(),
		part("signal-1", eventstore.Any(), Event("First")), part("signal-2", eventstore.Any(), Event("Second"))); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ch:
	default:
		t.Error("a listener of the second part's type got no signal")
	}
	_, err := s.AppendToStreams(context.Background(), part("signal-3", eventstore.Any(), Event("Second")), part("signal-1", eventstore.NoStream(), Event("First")))
	if err == nil {
		t.Fatal("a conflicting multi-stream append succeeded")
	}
	select {
	case <-ch:
		t.Error("a failed multi-stream append signalled")
	default:
	}
}
