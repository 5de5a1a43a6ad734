package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/eventstore"
)

func appendToStreamChecksTheExpectedRevision(t *testing.T, s eventstore.Store) {
	ctx := context.Background()

	tests := []struct {
		name     string
		existing int // events in the stream before the append
		expected eventstore.ExpectedRevision
		// For a success: the stream's last revision afterwards.
		wantNext uint64
		// For a conflict: the actual revision reported.
		conflict   bool
		wantActual uint64
		hasActual  bool
	}{
		{name: "any appends to a new stream", existing: 0, expected: eventstore.Any(), wantNext: 1},
		{name: "any appends to an existing stream", existing: 2, expected: eventstore.Any(), wantNext: 3},
		{name: "no stream appends to a new stream", existing: 0, expected: eventstore.NoStream(), wantNext: 1},
		{name: "no stream conflicts with an existing stream", existing: 2, expected: eventstore.NoStream(), conflict: true, wantActual: 1, hasActual: true},
		{name: "stream exists appends to an existing stream", existing: 2, expected: eventstore.StreamExists(), wantNext: 3},
		{name: "stream exists conflicts with a new stream", existing: 0, expected: eventstore.StreamExists(), conflict: true},
		{name: "exact appends at the last revision", existing: 2, expected: eventstore.Exact(1), wantNext: 3},
		{name: "exact conflicts below the last revision", existing: 3, expected: eventstore.Exact(1), conflict: true, wantActual: 2, hasActual: true},
		{name: "exact conflicts above the last revision", existing: 2, expected: eventstore.Exact(5), conflict: true, wantActual: 1, hasActual: true},
		{name: "exact conflicts with a new stream", existing: 0, expected: eventstore.Exact(0), conflict: true},
		{name: "exact beyond any possible revision conflicts", existing: 1, expected: eventstore.Exact(1 << 63), conflict: true, wantActual: 0, hasActual: true},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stream := fmt.Sprintf("expect-%d", i)
			if tt.existing > 0 {
				MustAppend(t, s, stream, eventstore.NoStream(), numbered(tt.existing)...)
			}
			batch := numbered(2)
			res, err := s.AppendToStream(ctx, stream, tt.expected, batch...)

			if tt.conflict {
				var wev *eventstore.WrongExpectedVersionError
				if !errors.As(err, &wev) {
					t.Fatalf("err = %v, want *WrongExpectedVersionError", err)
				}
				if !errors.Is(err, eventstore.ErrWrongExpectedVersion) {
					t.Errorf("errors.Is(err, ErrWrongExpectedVersion) = false")
				}
				if wev.Stream != stream || wev.Expected != tt.expected || wev.HasActual != tt.hasActual || wev.Actual != tt.wantActual {
					t.Errorf("conflict = %+v, want stream %s expected %s actual %d hasActual %v",
						*wev, stream, tt.expected, tt.wantActual, tt.hasActual)
				}
				got, err := s.ReadStream(ctx, stream, 0, 0)
				if tt.existing == 0 && !errors.Is(err, eventstore.ErrStreamNotFound) {
					t.Errorf("read after conflict: err = %v, want ErrStreamNotFound", err)
				}
				if len(got) != tt.existing {
					t.Errorf("stream has %d events after a conflict, want %d", len(got), tt.existing)
				}
				return
			}

			if err != nil {
				t.Fatalf("append: %v", err)
			}
			if res.NextExpectedRevision != tt.wantNext {
				t.Errorf("NextExpectedRevision = %d, want %d", res.NextExpectedRevision, tt.wantNext)
			}
			got, err := s.ReadStream(ctx, stream, 0, 0)
			if err != nil {
				t.Fatalf("read stream: %v", err)
			}
			for rev, e := range got {
				if e.Revision != uint64(rev) {
					t.Fatalf("event %d has revision %d: revisions must be gap-free from 0", rev, e.Revision)
				}
			}
			last := got[len(got)-1]
			if last.ID != batch[1].ID || last.Position != res.Position {
				t.Errorf("last event = %s at %s, want %s at %s", last.ID, last.Position, batch[1].ID, res.Position)
			}
		})
	}
}

func appendingNoEventsReportsTheStreamWithoutWriting(t *testing.T, s eventstore.Store) {
	ctx := context.Background()
	written := MustAppend(t, s, "quiet", eventstore.NoStream(), numbered(2)...)

	res, err := s.AppendToStream(ctx, "quiet", eventstore.Exact(1))
	if err != nil {
		t.Fatalf("empty append: %v", err)
	}
	if res != written {
		t.Errorf("empty append = %+v, want the stream's state %+v", res, written)
	}
	if _, err := s.AppendToStream(ctx, "quiet", eventstore.NoStream()); !errors.Is(err, eventstore.ErrWrongExpectedVersion) {
		t.Errorf("empty append with NoStream to an existing stream: err = %v, want a conflict", err)
	}
	if res, err := s.AppendToStream(ctx, "absent", eventstore.NoStream()); err != nil || res != (eventstore.AppendResult{}) {
		t.Errorf("empty append to an absent stream = %+v, %v; want the zero result", res, err)
	}
	if _, err := s.ReadStream(ctx, "absent", 0, 0); !errors.Is(err, eventstore.ErrStreamNotFound) {
		t.Errorf("empty append created a stream: err = %v", err)
	}
}

func concurrentExactAppendsLetExactlyOneWin(t *testing.T, s eventstore.Store) {
	MustAppend(t, s, "contended", eventstore.NoStream(), Event("Created"))

	const writers = 16
	var (
		wg        sync.WaitGroup
		mu        sync.Mutex
		wins      int
		conflicts []*eventstore.WrongExpectedVersionError
		others    []error
	)
	start := make(chan struct{})
	for range writers {
		wg.Go(func() {
			<-start
			_, err := s.AppendToStream(context.Background(), "contended", eventstore.Exact(0), Event("Changed"))
			mu.Lock()
			defer mu.Unlock()
			var wev *eventstore.WrongExpectedVersionError
			switch {
			case err == nil:
				wins++
			case errors.As(err, &wev):
				conflicts = append(conflicts, wev)
			default:
				others = append(others, err)
			}
		})
	}
	close(start)
	wg.Wait()

	if wins != 1 || len(conflicts) != writers-1 || len(others) != 0 {
		t.Fatalf("wins %d, conflicts %d, other errors %v; want 1 win and %d conflicts", wins, len(conflicts), others, writers-1)
	}
	for _, c := range conflicts {
		if !c.HasActual || c.Actual != 1 {
			t.Errorf("conflict reports actual %d (hasActual %v), want 1", c.Actual, c.HasActual)
		}
	}
}

func concurrentAnyAppendsToOneHotStreamAllSucceed(t *testing.T, s eventstore.Store) {
	const writers, appends = 32, 20
	var wg sync.WaitGroup
	errs := make(chan error, writers*appends)
	for range writers {
		wg.Go(func() {
			for range appends {
				if _, err := s.AppendToStream(context.Background(), "hot", eventstore.Any(), Event("Hit")); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("append: %v", err)
	}
	got, err := s.ReadStream(context.Background(), "hot", 0, 0)
	if err != nil {
		t.Fatalf("read stream: %v", err)
	}
	if len(got) != writers*appends {
		t.Fatalf("stream has %d events, want %d", len(got), writers*appends)
	}
	for i, e := range got {
		if e.Revision != uint64(i) {
			t.Fatalf("event %d has revision %d", i, e.Revision)
		}
	}
}

func anyAppendsRetryWhenExactAppendsTakeTheirRevision(t *testing.T, s eventstore.Store) {
	ctx := context.Background()
	MustAppend(t, s, "mixed", eventstore.NoStream(), Event("Created"))
	const writers, appends = 8, 15
	var (
		wg        sync.WaitGroup
		anyErrs   = make(chan error, writers*appends)
		exactWins atomic.Int64
	)
	for range writers {
		wg.Go(func() {
			for range appends {
				if _, err := s.AppendToStream(ctx, "mixed", eventstore.Any(), Event("Any")); err != nil {
					anyErrs <- err
				}
			}
		})
		wg.Go(func() {
			for range appends {
				head, err := s.AppendToStream(ctx, "mixed", eventstore.StreamExists())
				if err != nil {
					t.Errorf("read head: %v", err)
					return
				}
				_, err = s.AppendToStream(ctx, "mixed", eventstore.Exact(head.NextExpectedRevision), Event("Exact"))
				switch {
				case err == nil:
					exactWins.Add(1)
				case !errors.Is(err, eventstore.ErrWrongExpectedVersion):
					t.Errorf("exact append: %v", err)
				}
			}
		})
	}
	wg.Wait()
	close(anyErrs)
	for err := range anyErrs {
		t.Errorf("any append: %v", err)
	}
	got, err := s.ReadStream(ctx, "mixed", 0, 0)
	if err != nil {
		t.Fatalf("read stream: %v", err)
	}
	if want := 1 + writers*appends + int(exactWins.Load()); len(got) != want {
		t.Fatalf("stream has %d events, want %d", len(got), want)
	}
}

func appendingTheSameEventsAgainIsIdempotent(t *testing.T, s eventstore.Store) {
	ctx := context.Background()

	tests := []struct {
		name    string
		retryAs eventstore.ExpectedRevision
	}{
		// The original expectation no longer holds once the first attempt
		// committed; a retry with it must still succeed.
		{name: "retried with the original no-stream expectation", retryAs: eventstore.NoStream()},
		{name: "retried with any", retryAs: eventstore.Any()},
		{name: "retried with stream exists", retryAs: eventstore.StreamExists()},
		{name: "retried with the original exact expectation", retryAs: eventstore.Exact(0)},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stream := fmt.Sprintf("idem-%d", i)
			if tt.retryAs != eventstore.NoStream() {
				MustAppend(t, s, stream, eventstore.NoStream(), Event("First"))
			}
			batch := numbered(3)
			original := MustAppend(t, s, stream, tt.retryAs, batch...)
			MustAppend(t, s, "elsewhere", eventstore.Any(), Event("Unrelated"))

			again, err := s.AppendToStream(ctx, stream, tt.retryAs, batch...)
			if err != nil {
				t.Fatalf("re-append: %v", err)
			}
			if again != original {
				t.Errorf("re-append = %+v, want the original result %+v", again, original)
			}
			stored, err := s.ReadStream(ctx, stream, 0, 0)
			if err != nil {
				t.Fatalf("read stream: %v", err)
			}
			if want := int(original.NextExpectedRevision) + 1; len(stored) != want {
				t.Errorf("stream has %d events, want %d: the retry duplicated events", len(stored), want)
			}
		})
	}
}

func reusingEventIDsOutsideTheSameAppendIsAnError(t *testing.T, s eventstore.Store) {
	ctx := context.Background()
	stored := numbered(2)
	MustAppend(t, s, "owner", eventstore.NoStream(), stored...)

	tests := []struct {
		name     string
		stream   string
		expected eventstore.ExpectedRevision
		events   []eventstore.EventData
	}{
		{name: "an id stored in another stream", stream: "other", expected: eventstore.Any(), events: []eventstore.EventData{stored[0]}},
		{name: "an id stored in another stream under no stream", stream: "other", expected: eventstore.NoStream(), events: []eventstore.EventData{stored[1]}},
		{name: "stored ids mixed with new ones", stream: "owner", expected: eventstore.Any(), events: []eventstore.EventData{stored[0], stored[1], Event("New")}},
		{name: "stored ids in another order", stream: "owner", expected: eventstore.Any(), events: []eventstore.EventData{stored[1], stored[0]}},
		{name: "the same id twice in one append", stream: "fresh", expected: eventstore.Any(), events: func() []eventstore.EventData {
			e := Event("Twice")
			return []eventstore.EventData{e, e}
		}()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := s.AppendToStream(ctx, tt.stream, tt.expected, tt.events...)
			if !errors.Is(err, eventstore.ErrDuplicateEventID) {
				t.Fatalf("err = %v, want ErrDuplicateEventID", err)
			}
		})
	}
	all := ReadAllVisible(t, s, eventstore.Start, 2)
	if len(all) != 2 {
		t.Errorf("log has %d events, want the 2 original ones", len(all))
	}
}

func appendRejectsDataThatIsNotJSON(t *testing.T, s eventstore.Store) {
	_, err := s.AppendToStream(context.Background(), "bad", eventstore.Any(),
		eventstore.EventData{ID: uuid.New(), Type: "Bad", Data: []byte("not json")})
	if err == nil {
		t.Fatal("append of invalid JSON succeeded")
	}
}

func anEndedContextFailsEveryCallWithoutWriting(t *testing.T, s eventstore.Store) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, expected := range []eventstore.ExpectedRevision{eventstore.Any(), eventstore.NoStream()} {
		if _, err := s.AppendToStream(ctx, "cancelled", expected, Event("Late")); !errors.Is(err, context.Canceled) {
			t.Errorf("append with %s: err = %v, want context.Canceled", expected, err)
		}
	}
	if _, err := s.ReadStream(ctx, "cancelled", 0, 0); !errors.Is(err, context.Canceled) {
		t.Errorf("read stream: err = %v, want context.Canceled", err)
	}
	if _, err := s.ReadAll(ctx, eventstore.Start, 0); !errors.Is(err, context.Canceled) {
		t.Errorf("read all: err = %v, want context.Canceled", err)
	}
	if _, err := s.ReadStream(context.Background(), "cancelled", 0, 0); !errors.Is(err, eventstore.ErrStreamNotFound) {
		t.Errorf("read after the cancelled appends: err = %v, want ErrStreamNotFound", err)
	}
}
