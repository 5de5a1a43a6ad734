package ingest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/ingest/connector"
	"github.com/feedsvc/feedsvc/ingest/document"
	"github.com/feedsvc/feedsvc/internal/database"
	"github.com/feedsvc/feedsvc/testkit/testdb"
	"github.com/feedsvc/feedsvc/testkit/wait"
)

// countingReader reads site sources, counting each source's discoveries;
// a discovery waits for hold (nil: none) unless the source is let through.
type countingReader struct {
	mu    sync.Mutex
	polls map[uuid.UUID]int
	pass  map[uuid.UUID]bool
	hold  chan struct{}
	delay time.Duration
}

func (r *countingReader) SourceTypes() []domain.SourceType {
	return []domain.SourceType{domain.SourceSite}
}

func (r *countingReader) Discover(ctx context.Context, s connector.Source, _ time.Time) (connector.Discovery, error) {
	r.mu.Lock()
	r.polls[s.ID]++
	held := r.hold != nil && !r.pass[s.ID]
	r.mu.Unlock()
	if held {
		select {
		case <-r.hold:
		case <-ctx.Done():
			return connector.Discovery{}, ctx.Err()
		}
	}
	time.Sleep(r.delay)
	return connector.Discovery{}, nil
}

func (r *countingReader) Fetch(context.Context, connector.Candidate) (document.Document, error) {
	return document.Document{}, nil
}

func (r *countingReader) counts() map[uuid.UUID]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(map[uuid.UUID]int, len(r.polls))
	for k, v := range r.polls {
		out[k] = v
	}
	return out
}

// dueSites makes n site sources, each attached to a news feed (its
// backfill done) and due since a minute ago, and returns their ids.
func dueSites(t *testing.T, db *database.DB, n int) []uuid.UUID {
	t.Helper()
	ids := make([]uuid.UUID, n)
	for i := range ids {
		ids[i] = uuid.New()
		if _, err := db.Pool.Exec(context.Background(), `WITH a AS (INSERT INTO ingest_attachments (attachment_id, feed_id, organization_id, source_id,
				source_type, details, source_enabled, feed_enabled, attached_at)
			VALUES (gen_random_uuid(), gen_random_uuid(), gen_random_uuid(), $1, 'site', '{"url": "https://example.com/"}', true, true, now() - interval '1 hour') RETURNING attachment_id)
			, b AS (INSERT INTO ingest_backfills (attachment_id, done_at) SELECT attachment_id, now() FROM a)
			INSERT INTO crawl_state (source_id, next_at, interval_ms) VALUES ($1, now() - interval '1 minute', 600000)`, ids[i]); err != nil {
			t.Fatal(err)
		}
	}
	return ids
}

// runTwoSlots runs a worker of two slots, owner "ahead", over the sources
// reader reads, with the lease given (0: the default). Its tick (an hour)
// never comes: every claim after the first is brought forward by a
// finished crawl. stop stops it and waits.
func runTwoSlots(t *testing.T, db *database.DB, reader *countingReader, lease time.Duration) (w *Worker, stop func()) {
	t.Helper()
	registry, err := connector.NewRegistry(reader)
	if err != nil {
		t.Fatal(err)
	}
	w = New(Parts{DB: db.Bun, Pool: db.Pool, Connectors: registry},
		Config{Owner: "ahead", PollInterval: time.Hour, Concurrency: 2, Tick: time.Hour, LeaseDuration: lease}, nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = w.Run(ctx) }()
	return w, func() { cancel(); <-done }
}

// queueBehindTwo runs a two-slot worker (runTwoSlots, with the lease
// given) over 20 due sites, of which the first two claimed pass and the
// rest wait in their crawls until reader.hold is closed, and waits until
// sources are queued ahead behind the two held crawls: leased then are
// the two that passed (their releases wait for the loop's next tick), the
// two held, and the ones claimed ahead, 3 * 2 slots, or one fewer when
// the loop turned after the first passing crawl and before the second.
func queueBehindTwo(t *testing.T, db *database.DB, lease time.Duration) ([]uuid.UUID, *countingReader, func()) {
	t.Helper()
	ids := dueSites(t, db, 20)
	reader := &countingReader{polls: map[uuid.UUID]int{}, pass: map[uuid.UUID]bool{}, hold: make(chan struct{})}
	var first []uuid.UUID
	if err := db.Bun.NewRaw(`SELECT source_id FROM crawl_state ORDER BY next_at LIMIT 2`).Scan(context.Background(), &first); err != nil {
		t.Fatal(err)
	}
	for _, id := range first {
		reader.pass[id] = true
	}
	_, stop := runTwoSlots(t, db, reader, lease)
	const least = 2 + 2 + 3*2 - 1
	var leased int
	wait.Within(20*time.Second, func() bool {
		if err := db.Pool.QueryRow(context.Background(), `SELECT count(*) FROM crawl_state WHERE lease_owner = 'ahead'`).Scan(&leased); err != nil {
			t.Fatal(err)
		}
		return leased >= least && len(reader.counts()) == 4
	})
	if leased < least {
		stop()
		t.Fatalf("%d sources leased at 2 slots, want at least %d: some claimed ahead", leased, least)
	}
	return ids, reader, stop
}

// crawledOnce fails the test unless reader saw each of ids crawled once.
func crawledOnce(t *testing.T, reader *countingReader, ids []uuid.UUID) {
	t.Helper()
	polls := reader.counts()
	for _, id := range ids {
		if polls[id] != 1 {
			t.Errorf("source %s was crawled %d times, want once", id, polls[id])
		}
	}
}

// A process whose slots are all busy used to claim once per finished
// crawl, a source or two a statement. When a claim fills every free slot
// the next one takes sources beyond them, and the slots that free up take
// those first: a burst of due sources costs a few claims, each source is
// still crawled once, and what is claimed but not crawled when the
// process stops is handed back, due as it was.
func TestABurstOfDueSourcesIsClaimedInAFewStatementsAndEachCrawledOnce(t *testing.T) {
	t.Parallel()
	t.Run("each source is crawled once, in a few claims", func(t *testing.T) {
		t.Parallel()
		db, _ := testdb.New(t)
		const n = 48
		ids := dueSites(t, db, n)
		reader := &countingReader{polls: map[uuid.UUID]int{}, delay: 20 * time.Millisecond}
		w, stop := runTwoSlots(t, db, reader, 0)
		wait.Within(20*time.Second, func() bool { return len(reader.counts()) == n })
		stop()
		crawledOnce(t, reader, ids)
		// One claim per finished crawl would be about n; a claim that
		// filled its slots takes 2 + 3*2 = 8 at the next, so n sources
		// take about n/7 claims.
		if c := w.claims.Load(); c > n/4 {
			t.Errorf("%d claims for %d due sources at 2 slots, want at most %d", c, n, n/4)
		}
	})
	t.Run("the sources claimed ahead are handed back, still due, when the process stops", func(t *testing.T) {
		t.Parallel()
		db, _ := testdb.New(t)
		ids, _, stop := queueBehindTwo(t, db, 0)
		stop()
		var held, due int
		if err := db.Pool.QueryRow(context.Background(), `SELECT count(*) FILTER (WHERE lease_owner IS NOT NULL),
				count(*) FILTER (WHERE next_at <= now() AND last_crawl_at IS NULL) FROM crawl_state`).Scan(&held, &due); err != nil {
			t.Fatal(err)
		}
		if held != 0 {
			t.Errorf("%d leases still held after the process stopped, want every one handed back", held)
		}
		// The two that passed were crawled and rescheduled; the two held
		// in a crawl were interrupted; none of the others was crawled.
		if want := len(ids) - 2; due < want-2 || due > want {
			t.Errorf("%d sources due and never crawled after the stop, want %d or so", due, want)
		}
	})
	t.Run("sources claimed ahead that waited past a third of their lease are still each crawled once", func(t *testing.T) {
		t.Parallel()
		db, _ := testdb.New(t)
		// A lease of 900 ms: what is claimed ahead goes stale after 300.
		ids, reader, stop := queueBehindTwo(t, db, 900*time.Millisecond)
		defer stop()
		// The held crawls end after the queue went stale: the slots then
		// hand the queue back and claim again.
		time.Sleep(500 * time.Millisecond)
		close(reader.hold)
		wait.Within(20*time.Second, func() bool { return len(reader.counts()) == len(ids) })
		crawledOnce(t, reader, ids)
	})
}

func TestAClaimTakesAheadWhatTheSlotsFinishInATickAtTheirRecentPace(t *testing.T) {
	tests := []struct {
		name   string
		crawls []time.Duration
		want   int
	}{
		{"nothing is claimed ahead before a crawl ended", nil, 0},
		{"crawls of a tenth of a tick take three times the slots, no more", []time.Duration{100 * time.Millisecond}, 12},
		{"crawls of half a tick take two per slot", []time.Duration{500 * time.Millisecond}, 8},
		{"crawls longer than a tick take fewer than the slots", []time.Duration{1500 * time.Millisecond}, 2},
		{"one slow crawl among fast ones weighs an eighth", []time.Duration{250 * time.Millisecond, 250*time.Millisecond + 8*time.Second}, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var p crawlPace
			for _, d := range tt.crawls {
				p.add(d)
			}
			if got := p.ahead(4, time.Second); got != tt.want {
				t.Errorf("ahead(4 slots, 1s tick) = %d, want %d", got, tt.want)
			}
		})
	}
}
