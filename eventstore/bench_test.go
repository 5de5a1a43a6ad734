package eventstore_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/eventstore"
	"github.com/feedsvc/feedsvc/eventstore/storetest"
)

// benchPayload is about the size of a feed item event.
var benchPayload = []byte(`{"feed_id":"0b8e3c1e-6f3a-4a57-9a8e-3f1f2b7c9d10","item_id":"https://example.com/posts/2026/11/22/a-reasonably-long-slug","title":"A reasonably long title of a feed item","published_at":"2026-11-22T10:00:00Z"}`)

func benchEvents(n int) []eventstore.EventData {
	events := make([]eventstore.EventData, n)
	for i := range events {
		events[i] = eventstore.EventData{ID: uuid.New(), Type: "ItemDiscovered", Data: benchPayload}
	}
	return events
}

// BenchmarkAppendSingle16Writers is the command path: 16 writers, each
// appending one event at a time to its own stream with the expectation a
// command handler would use.
func BenchmarkAppendSingle16Writers(b *testing.B) {
	const writers = 16
	s, _, _ := newStore(b)
	ctx := context.Background()

	// Open the connections and prepare the statements outside the timing.
	var warm sync.WaitGroup
	for w := range writers {
		warm.Go(func() {
			if _, err := s.AppendToStream(ctx, fmt.Sprintf("writer-%d", w), eventstore.NoStream(), benchEvents(1)...); err != nil {
				b.Error(err)
			}
		})
	}
	warm.Wait()

	latencies := make([][]time.Duration, writers)
	var (
		next atomic.Int64
		wg   sync.WaitGroup
	)
	b.ResetTimer()
	start := time.Now()
	for w := range writers {
		wg.Go(func() {
			stream := fmt.Sprintf("writer-%d", w)
			rev := uint64(0)
			for next.Add(1) <= int64(b.N) {
				event := benchEvents(1)
				t0 := time.Now()
				res, err := s.AppendToStream(ctx, stream, eventstore.Exact(rev), event...)
				latencies[w] = append(latencies[w], time.Since(t0))
				if err != nil {
					b.Error(err)
					return
				}
				rev = res.NextExpectedRevision
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()

	all := slices.Concat(latencies...)
	slices.Sort(all)
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "appends/s")
	b.ReportMetric(ms(percentile(all, 0.50)), "p50_ms")
	b.ReportMetric(ms(percentile(all, 0.99)), "p99_ms")
}

// BenchmarkAppendBatch100 is one writer appending 100 events per call, as
// an import or a fetch of a busy feed would.
func BenchmarkAppendBatch100(b *testing.B) {
	const size = 100
	s, _, _ := newStore(b)
	ctx := context.Background()
	res, err := s.AppendToStream(ctx, "batch", eventstore.NoStream(), benchEvents(size)...)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	start := time.Now()
	for range b.N {
		events := benchEvents(size)
		res, err = s.AppendToStream(ctx, "batch", eventstore.Exact(res.NextExpectedRevision), events...)
		if err != nil {
			b.Fatal(err)
		}
	}
	elapsed := time.Since(start)
	b.StopTimer()
	b.ReportMetric(float64(b.N*size)/elapsed.Seconds(), "events/s")
}

// BenchmarkReadAll is a projection catching up: the whole log, read in
// pages of 1000.
func BenchmarkReadAll(b *testing.B) {
	const (
		total       = 200_000
		perTx       = 1000
		pageSize    = 1000
		streamCount = 5000
	)
	s, db, _ := newStore(b)
	ctx := context.Background()
	// Filled with plain SQL, one transaction per 1000 rows, because
	// appending 200k events through the store would dominate the run.
	for off := 0; off < total; off += perTx {
		if _, err := db.Pool.Exec(ctx, `
			INSERT INTO events (stream_id, stream_revision, event_id, event_type, data)
			SELECT 'feed-' || (g % $3), g / $3, gen_random_uuid(), 'ItemDiscovered', $4::jsonb
			FROM generate_series($1::int, $2::int) AS g`,
			off, off+perTx-1, streamCount, benchPayload); err != nil {
			b.Fatal(err)
		}
	}
	if _, err := db.Pool.Exec(ctx, `VACUUM ANALYZE events`); err != nil {
		b.Fatal(err)
	}
	storetest.ReadAllVisible(b, s, eventstore.Start, total)

	read := 0
	for b.Loop() {
		from := eventstore.Start
		for {
			events, err := s.ReadAll(ctx, from, pageSize)
			if err != nil {
				b.Fatal(err)
			}
			read += len(events)
			if len(events) < pageSize {
				break
			}
			from = events[len(events)-1].Position
		}
	}
	b.ReportMetric(float64(read)/b.Elapsed().Seconds(), "events/s")
}

func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	return sorted[min(len(sorted)-1, int(float64(len(sorted))*p))]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// BenchmarkAppendConflictNoStream measures the answer to an append whose
// stream already exists: how the ingester learns a feed already has an
// article.
func BenchmarkAppendConflictNoStream(b *testing.B) {
	s, _, _ := newStore(b)
	ctx := context.Background()
	if _, err := s.AppendToStream(ctx, "taken", eventstore.NoStream(), benchEvents(1)...); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	start := time.Now()
	for range b.N {
		_, err := s.AppendToStream(ctx, "taken", eventstore.NoStream(), benchEvents(1)...)
		if !errors.Is(err, eventstore.ErrWrongExpectedVersion) {
			b.Fatalf("err %v, want a conflict", err)
		}
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "conflicts/s")
}
