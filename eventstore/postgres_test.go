package eventstore_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/feedsvc/feedsvc/eventstore"
	"github.com/feedsvc/feedsvc/internal/database"
	"github.com/feedsvc/feedsvc/internal/testdb"
)

func newStore(t testing.TB) (*eventstore.Postgres, *database.DB, string) {
	t.Helper()
	db, dsn := testdb.New(t)
	s := eventstore.NewPostgres(db.Pool)
	s.PollInterval = 20 * time.Millisecond
	return s, db, dsn
}

func newEvent(typ string) eventstore.EventData {
	return eventstore.EventData{ID: uuid.New(), Type: typ, Data: []byte(`{"n":1}`)}
}

func newEvents(n int) []eventstore.EventData {
	events := make([]eventstore.EventData, n)
	for i := range events {
		events[i] = eventstore.EventData{
			ID:   uuid.New(),
			Type: "Numbered",
			Data: []byte(fmt.Sprintf(`{"i":%d}`, i)),
		}
	}
	return events
}

func mustAppend(t testing.TB, s eventstore.Store, stream string, expected eventstore.ExpectedRevision, events ...eventstore.EventData) eventstore.AppendResult {
	t.Helper()
	res, err := s.AppendToStream(context.Background(), stream, expected, events...)
	if err != nil {
		t.Fatalf("append to %s: %v", stream, err)
	}
	return res
}

func ids(events []eventstore.RecordedEvent) []uuid.UUID {
	out := make([]uuid.UUID, len(events))
	for i, e := range events {
		out[i] = e.ID
	}
	return out
}

func dataIDs(events []eventstore.EventData) []uuid.UUID {
	out := make([]uuid.UUID, len(events))
	for i, e := range events {
		out[i] = e.ID
	}
	return out
}

func equalIDs(a, b []uuid.UUID) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// readAllVisible waits until ReadAll returns at least n events after from.
// The fence is cluster-wide, so a transaction in another test package that
// runs at the same time can briefly hold events back; waiting keeps the
// tests about order, not timing.
func readAllVisible(t testing.TB, s eventstore.Store, from eventstore.Position, n int) []eventstore.RecordedEvent {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		events, err := s.ReadAll(context.Background(), from, 0)
		if err != nil {
			t.Fatalf("read all: %v", err)
		}
		if len(events) >= n {
			return events
		}
		if time.Now().After(deadline) {
			t.Fatalf("read all: got %d events, want %d", len(events), n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestAppendToStreamChecksTheExpectedRevision(t *testing.T) {
	s, _, _ := newStore(t)
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
				mustAppend(t, s, stream, eventstore.NoStream(), newEvents(tt.existing)...)
			}
			batch := newEvents(2)
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

func TestAppendingNoEventsReportsTheStreamWithoutWriting(t *testing.T) {
	s, _, _ := newStore(t)
	ctx := context.Background()
	written := mustAppend(t, s, "quiet", eventstore.NoStream(), newEvents(2)...)

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

func TestConcurrentExactAppendsLetExactlyOneWin(t *testing.T) {
	s, _, _ := newStore(t)
	mustAppend(t, s, "contended", eventstore.NoStream(), newEvent("Created"))

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
			_, err := s.AppendToStream(context.Background(), "contended", eventstore.Exact(0), newEvent("Changed"))
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

func TestConcurrentAnyAppendsToOneHotStreamAllSucceed(t *testing.T) {
	s, _, _ := newStore(t)
	const writers, appends = 32, 20
	var wg sync.WaitGroup
	errs := make(chan error, writers*appends)
	for range writers {
		wg.Go(func() {
			for range appends {
				if _, err := s.AppendToStream(context.Background(), "hot", eventstore.Any(), newEvent("Hit")); err != nil {
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

func TestAnyAppendsRetryWhenExactAppendsTakeTheirRevision(t *testing.T) {
	s, _, _ := newStore(t)
	ctx := context.Background()
	mustAppend(t, s, "mixed", eventstore.NoStream(), newEvent("Created"))
	const writers, appends = 8, 15
	var (
		wg        sync.WaitGroup
		anyErrs   = make(chan error, writers*appends)
		exactWins atomic.Int64
	)
	for range writers {
		wg.Go(func() {
			for range appends {
				if _, err := s.AppendToStream(ctx, "mixed", eventstore.Any(), newEvent("Any")); err != nil {
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
				_, err = s.AppendToStream(ctx, "mixed", eventstore.Exact(head.NextExpectedRevision), newEvent("Exact"))
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

func TestAppendingTheSameEventsAgainIsIdempotent(t *testing.T) {
	s, _, _ := newStore(t)
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
				mustAppend(t, s, stream, eventstore.NoStream(), newEvent("First"))
			}
			batch := newEvents(3)
			original := mustAppend(t, s, stream, tt.retryAs, batch...)
			mustAppend(t, s, "elsewhere", eventstore.Any(), newEvent("Unrelated"))

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

func TestReusingEventIDsOutsideTheSameAppendIsAnError(t *testing.T) {
	s, _, _ := newStore(t)
	ctx := context.Background()
	stored := newEvents(2)
	mustAppend(t, s, "owner", eventstore.NoStream(), stored...)

	tests := []struct {
		name     string
		stream   string
		expected eventstore.ExpectedRevision
		events   []eventstore.EventData
	}{
		{name: "an id stored in another stream", stream: "other", expected: eventstore.Any(), events: []eventstore.EventData{stored[0]}},
		{name: "an id stored in another stream under no stream", stream: "other", expected: eventstore.NoStream(), events: []eventstore.EventData{stored[1]}},
		{name: "stored ids mixed with new ones", stream: "owner", expected: eventstore.Any(), events: []eventstore.EventData{stored[0], stored[1], newEvent("New")}},
		{name: "stored ids in another order", stream: "owner", expected: eventstore.Any(), events: []eventstore.EventData{stored[1], stored[0]}},
		{name: "the same id twice in one append", stream: "fresh", expected: eventstore.Any(), events: func() []eventstore.EventData {
			e := newEvent("Twice")
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
	all := readAllVisible(t, s, eventstore.Start, 2)
	if len(all) != 2 {
		t.Errorf("log has %d events, want the 2 original ones", len(all))
	}
}

func TestAppendRejectsDataThatIsNotJSON(t *testing.T) {
	s, _, _ := newStore(t)
	_, err := s.AppendToStream(context.Background(), "bad", eventstore.Any(),
		eventstore.EventData{ID: uuid.New(), Type: "Bad", Data: []byte("not json")})
	if err == nil {
		t.Fatal("append of invalid JSON succeeded")
	}
}

func TestReadStreamReturnsEventsInRevisionOrder(t *testing.T) {
	s, _, _ := newStore(t)
	ctx := context.Background()
	written := newEvents(5)
	mustAppend(t, s, "numbers", eventstore.NoStream(), written[:2]...)
	mustAppend(t, s, "noise", eventstore.NoStream(), newEvent("Noise"))
	mustAppend(t, s, "numbers", eventstore.Exact(1), written[2])
	mustAppend(t, s, "numbers", eventstore.Exact(2), written[3:]...)
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
			if !equalIDs(ids(got), tt.want) {
				t.Fatalf("ids = %v, want %v", ids(got), tt.want)
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

func TestReadStreamOfAStreamWithoutEventsIsNotFound(t *testing.T) {
	s, _, _ := newStore(t)
	for _, from := range []uint64{0, 3} {
		_, err := s.ReadStream(context.Background(), "nothing-here", from, 10)
		if !errors.Is(err, eventstore.ErrStreamNotFound) {
			t.Errorf("from %d: err = %v, want ErrStreamNotFound", from, err)
		}
	}
}

func TestReadAllReturnsTheLogInOrderAndPages(t *testing.T) {
	s, _, _ := newStore(t)
	ctx := context.Background()
	var want []uuid.UUID
	for i := range 7 {
		batch := newEvents(1 + i%3)
		mustAppend(t, s, fmt.Sprintf("s-%d", i%3), eventstore.Any(), batch...)
		want = append(want, dataIDs(batch)...)
	}
	everything := readAllVisible(t, s, eventstore.Start, len(want))
	if !equalIDs(ids(everything), want) {
		t.Fatalf("log = %v, want append order %v", ids(everything), want)
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
				if len(events) < page {
					break
				}
				from = events[len(events)-1].Position
			}
			if !equalIDs(ids(got), want) {
				t.Fatalf("paged log = %v, want %v", ids(got), want)
			}
			for i := 1; i < len(got); i++ {
				if !got[i-1].Position.Less(got[i].Position) {
					t.Fatalf("position %s is not after %s", got[i].Position, got[i-1].Position)
				}
			}
		})
	}
}

// This is the reason for the xid8 fence: an append that takes its position
// first but commits last must not be skipped by a reader.
func TestReadAllDoesNotPassATransactionThatCommitsOutOfOrder(t *testing.T) {
	s, db, _ := newStore(t)
	ctx := context.Background()

	early, err := db.Pool.Begin(ctx)
	if err != nil {
		t.Fatalf("begin: %v", err)
	}
	defer early.Rollback(ctx) //nolint:errcheck // no-op after commit
	earlyID := uuid.New()
	if _, err := early.Exec(ctx,
		`INSERT INTO events (stream_id, stream_revision, event_id, event_type, data) VALUES ('early', 0, $1, 'Early', '{}')`,
		earlyID); err != nil {
		t.Fatalf("insert in the open transaction: %v", err)
	}

	late := newEvent("Late")
	res := mustAppend(t, s, "late", eventstore.NoStream(), late)

	got, err := s.ReadAll(ctx, eventstore.Start, 0)
	if err != nil {
		t.Fatalf("read all: %v", err)
	}
	if len(got) != 0 {
		t.Fatalf("read all returned %v while an older transaction is open: a reader would skip its event", ids(got))
	}

	if err := early.Commit(ctx); err != nil {
		t.Fatalf("commit: %v", err)
	}
	got = readAllVisible(t, s, eventstore.Start, 2)
	if !equalIDs(ids(got), []uuid.UUID{earlyID, late.ID}) {
		t.Fatalf("log = %v, want the early transaction's event first: %v", ids(got), []uuid.UUID{earlyID, late.ID})
	}
	if got[1].Position != res.Position || !got[0].Position.Less(got[1].Position) {
		t.Errorf("positions %s, %s; append reported %s", got[0].Position, got[1].Position, res.Position)
	}
}

func TestReadAllUsesThePrimaryKeyIndex(t *testing.T) {
	_, db, _ := newStore(t)
	ctx := context.Background()
	// Enough rows that a sequential scan would look cheaper if the index
	// could not serve the row comparison.
	if _, err := db.Pool.Exec(ctx, `
		INSERT INTO events (stream_id, stream_revision, event_id, event_type, data)
		SELECT 's-' || (g % 100), g / 100, gen_random_uuid(), 'Bulk', '{}'
		FROM generate_series(0, 19999) AS g`); err != nil {
		t.Fatalf("fill: %v", err)
	}
	if _, err := db.Pool.Exec(ctx, `ANALYZE events`); err != nil {
		t.Fatalf("analyze: %v", err)
	}
	rows, err := db.Pool.Query(ctx, "EXPLAIN "+eventstore.ReadAllSQL, "0", int64(0), int64(1000))
	if err != nil {
		t.Fatalf("explain: %v", err)
	}
	plan, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatalf("explain: %v", err)
	}
	text := strings.Join(plan, "\n")
	if strings.Contains(text, "Index Scan using events_pkey") && !strings.Contains(text, "Sort") {
		return
	}
	t.Errorf("ReadAll does not use the primary key index:\n%s", strings.Join(plan, "\n"))
}

func TestAppendedSignalsListenersAfterEachAppend(t *testing.T) {
	s, _, _ := newStore(t)
	first, stopFirst := s.Appended()
	second, stopSecond := s.Appended()
	defer stopSecond()

	// Two appends with nobody reading coalesce into one pending signal.
	mustAppend(t, s, "a", eventstore.Any(), newEvent("A"))
	mustAppend(t, s, "a", eventstore.Any(), newEvent("A"))
	for name, ch := range map[string]<-chan struct{}{"first": first, "second": second} {
		select {
		case <-ch:
		default:
			t.Errorf("%s listener got no signal", name)
		}
		select {
		case <-ch:
			t.Errorf("%s listener got a second signal: sends must coalesce", name)
		default:
		}
	}

	stopFirst()
	stopFirst() // stopping twice is harmless
	mustAppend(t, s, "a", eventstore.Any(), newEvent("A"))
	select {
	case <-first:
		t.Error("a stopped listener was signalled")
	default:
	}
	select {
	case <-second:
	default:
		t.Error("the remaining listener got no signal")
	}

	if _, err := s.AppendToStream(context.Background(), "a", eventstore.NoStream(), newEvent("A")); err == nil {
		t.Fatal("conflicting append succeeded")
	}
	select {
	case <-second:
		t.Error("a failed append signalled")
	default:
	}
}
