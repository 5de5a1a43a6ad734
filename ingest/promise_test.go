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
	"github.com/feedsvc/feedsvc/testkit/testdb"
	"github.com/feedsvc/feedsvc/testkit/wait"
)

// siteReader reads site sources; the schedule's tests never call it.
type siteReader struct{}

func (siteReader) SourceTypes() []domain.SourceType { return []domain.SourceType{domain.SourceSite} }
func (siteReader) Discover(context.Context, connector.Source, time.Time) (connector.Discovery, error) {
	return connector.Discovery{}, nil
}
func (siteReader) Fetch(context.Context, connector.Candidate) (document.Document, error) {
	return document.Document{}, nil
}

// siteReaders is a registry of siteReader alone.
func siteReaders(t *testing.T) *connector.Registry {
	t.Helper()
	registry, err := connector.NewRegistry(siteReader{})
	if err != nil {
		t.Fatal(err)
	}
	return registry
}

// An installation upgraded from a version that let quiet sources wait up to
// two hours has them scheduled that far ahead. The crawler of this version
// brings each within the interval as it starts, spread over one interval
// rather than all due at once, and leaves alone the sources a site asked to
// wait, those backing off after failures, those being polled and those
// already within it; several crawlers starting together do the same.
func TestCrawlersStartingBringEverySourceWithinTheIntervalSpreadOverIt(t *testing.T) {
	t.Parallel()
	db, _ := testdb.New(t)
	ctx := context.Background()
	registry := siteReaders(t)
	const interval = 10 * time.Minute
	const old = 300
	if _, err := db.Pool.Exec(ctx, `INSERT INTO crawl_state (source_id, next_at, interval_ms)
		SELECT gen_random_uuid(), now() + interval '2 hours' - i * interval '1 second', 7200000 FROM generate_series(1, $1) i`, old); err != nil {
		t.Fatal(err)
	}
	kept := map[string]uuid.UUID{}
	for name, row := range map[string]string{
		"a site's Retry-After":             `now() + interval '20 hours', 0, 'retryAfter', NULL, NULL`,
		"a site's Crawl-delay":             `now() + interval '3 hours', 0, 'crawlDelay', NULL, NULL`,
		"a site's Cache-Control":           `now() + interval '50 minutes', 0, 'cacheControl', NULL, NULL`,
		"a backoff after failures":         `now() + interval '5 hours', 3, 'backoff', NULL, NULL`,
		"a poll in progress":               `now() + interval '2 hours', 0, NULL, now() + interval '1 minute', 'another-crawler'`,
		"a source already within the time": `now() + interval '5 minutes', 0, 'interval', NULL, NULL`,
	} {
		id := uuid.New()
		kept[name] = id
		if _, err := db.Pool.Exec(ctx, `INSERT INTO crawl_state (source_id, next_at, failures, interval_reason, leased_until, lease_owner)
			SELECT $1, `+row, id); err != nil {
			t.Fatal(err)
		}
	}
	before := map[uuid.UUID]time.Time{}
	for _, id := range kept {
		var next time.Time
		if err := db.Pool.QueryRow(ctx, `SELECT next_at FROM crawl_state WHERE source_id = $1`, id).Scan(&next); err != nil {
			t.Fatal(err)
		}
		before[id] = next
	}

	start := time.Now()
	runCtx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for _, owner := range []string{"crawler-a", "crawler-b", "crawler-c"} {
		w := New(Parts{DB: db.Bun, Pool: db.Pool, Connectors: registry}, Config{Owner: owner, PollInterval: interval}, nil)
		wg.Add(1)
		go func() { defer wg.Done(); _ = w.Run(runCtx) }()
	}
	var late int
	wait.Within(10*time.Second, func() bool {
		if err := db.Pool.QueryRow(ctx, `SELECT count(*) FROM crawl_state WHERE next_at > now() + $1 * interval '1 millisecond'`,
			interval.Milliseconds()).Scan(&late); err != nil {
			t.Fatal(err)
		}
		return late == 5
	})
	cancel()
	wg.Wait()
	if late != 5 {
		t.Fatalf("%d sources are due more than an interval from now, want only the five a site, a failure or a poll holds there", late)
	}

	t.Run("the sources scheduled beyond the interval are due within it, spread over it", func(t *testing.T) {
		var offsets []time.Duration
		rows, err := db.Pool.Query(ctx, `SELECT next_at FROM crawl_state WHERE interval_ms = 7200000`)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var next time.Time
			if err := rows.Scan(&next); err != nil {
				t.Fatal(err)
			}
			offsets = append(offsets, next.Sub(start))
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		if len(offsets) != old {
			t.Fatalf("%d sources, want %d", len(offsets), old)
		}
		var tenths [10]int
		for _, o := range offsets {
			if o < -time.Second || o > interval+time.Second {
				t.Fatalf("a source is due %v from the start, want within the interval (%v)", o, interval)
			}
			tenths[min(max(int(o*10/interval), 0), 9)]++
		}
		// Uniform: 30 in each tenth on average; a burst would put most in
		// one.
		for i, n := range tenths {
			if n > old/4 {
				t.Errorf("%d of %d sources due in tenth %d of the interval (%v), want them spread over it", n, old, i, tenths)
			}
		}
	})
	t.Run("the sources held by their site, a backoff or a poll, or already within the interval, are left as they were", func(t *testing.T) {
		for name, id := range kept {
			var next time.Time
			if err := db.Pool.QueryRow(ctx, `SELECT next_at FROM crawl_state WHERE source_id = $1`, id).Scan(&next); err != nil {
				t.Fatal(err)
			}
			if !next.Equal(before[id]) {
				t.Errorf("%s: next poll moved from %v to %v", name, before[id], next)
			}
		}
	})
}

func TestTheIntervalsBoundsDefaultToAMinuteAndTheIntervalItself(t *testing.T) {
	tests := []struct {
		name                  string
		in                    Config
		interval, least, most time.Duration
	}{
		{"by default every source within 10 minutes, a busy one down to a minute", Config{}, 10 * time.Minute, time.Minute, 10 * time.Minute},
		{"an interval under a minute is also the least", Config{PollInterval: 2 * time.Second}, 2 * time.Second, 2 * time.Second, 2 * time.Second},
		{"a least above the interval is the interval", Config{PollInterval: time.Minute, MinPollInterval: time.Hour}, time.Minute, time.Minute, time.Minute},
		{"a most below the interval is the interval", Config{PollInterval: time.Hour, MaxPollInterval: time.Minute}, time.Hour, time.Minute, time.Hour},
		{"a most above the interval is kept", Config{MaxPollInterval: 2 * time.Hour}, 10 * time.Minute, time.Minute, 2 * time.Hour},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := tt.in.withDefaults()
			if c.PollInterval != tt.interval || c.MinPollInterval != tt.least || c.MaxPollInterval != tt.most {
				t.Errorf("interval %v in [%v, %v], want %v in [%v, %v]", c.PollInterval, c.MinPollInterval, c.MaxPollInterval, tt.interval, tt.least, tt.most)
			}
		})
	}
}
