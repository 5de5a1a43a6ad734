package eventstore_test

import (
	"bufio"
	"context"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/feedsvc/feedsvc/eventstore"
	"github.com/feedsvc/feedsvc/eventstore/storetest"
	"github.com/feedsvc/feedsvc/internal/database"
)

// benchLogSize is the log the export and import benchmarks work on:
// FEEDSVC_BENCH_EVENTS, 100,000 by default (make bench's quick pass; the
// figures in bench/docs/log-export-import.md are of a million).
func benchLogSize(b *testing.B) int {
	n := 100_000
	if v := os.Getenv("FEEDSVC_BENCH_EVENTS"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 1 {
			b.Fatalf("FEEDSVC_BENCH_EVENTS=%q: want a positive number", v)
		}
	}
	return n
}

// seedNewsItems fills the log with n events shaped like NewsItemAdded (one
// stream each, ~850 bytes of data, metadata with an organization, one of
// 100 feeds), 10,000 per transaction, with SQL: appending them through the
// store would dominate the run.
func seedNewsItems(b *testing.B, s *eventstore.Postgres, db *database.DB, n int) {
	b.Helper()
	ctx := context.Background()
	const perTx = 10_000
	for off := 0; off < n; off += perTx {
		if _, err := db.Pool.Exec(ctx, `
			INSERT INTO events (stream_id, stream_revision, event_id, event_type, data, metadata, recorded_at)
			SELECT 'newsitem-' || f || '-' || p, 0, gen_random_uuid(), 'NewsItemAdded',
				jsonb_build_object('itemId', gen_random_uuid(), 'feedId', f, 'organizationId', o, 'newsPageId', p,
					'versionId', gen_random_uuid(), 'sourceId', '6f1c0c6e-3d4e-4a8e-9a59-0c3f5c2f1a10',
					'attachmentId', '0b8e3c1e-6f3a-4a57-9a8e-3f1f2b7c9d10', 'sourceType', 'site',
					'content', jsonb_build_object(
						'url', 'https://news.example.com/2026/01/story-' || g || '-a-reasonably-long-slug-for-a-news-article',
						'title', 'Story ' || g || ': a reasonably long headline about something that happened',
						'description', 'A paragraph-long summary of the article, as feeds and pages usually provide one, long enough to look like the real thing.',
						'imageUrl', 'https://cdn.example.com/images/' || g || '.jpg',
						'publishedAt', '2026-01-01T00:00:00Z'),
					'at', '2026-01-01T01:00:00Z'),
				jsonb_build_object('schemaVersion', 1, 'organizationId', o),
				timestamptz '2026-01-01 00:00:00Z' + g * interval '1 second'
			FROM generate_series($1::int, $2::int) AS g,
				LATERAL (SELECT md5((g % 100)::text)::uuid AS f, md5('org')::uuid AS o, gen_random_uuid() AS p) AS x`,
			off, min(off+perTx, n)-1); err != nil {
			b.Fatal(err)
		}
	}
	if _, err := db.Pool.Exec(ctx, `VACUUM ANALYZE events`); err != nil {
		b.Fatal(err)
	}
	storetest.ReadAllVisible(b, s, eventstore.Start, 1) // the fence is past the seeding
}

// BenchmarkExport writes the whole log as NDJSON (to io.Discard: the
// file system is not what is measured).
func BenchmarkExport(b *testing.B) {
	n := benchLogSize(b)
	s, db, _ := newStore(b)
	seedNewsItems(b, s, db, n)
	ctx := context.Background()
	var written countingWriter
	events := int64(0)
	for b.Loop() {
		done, err := s.Export(ctx, &written, eventstore.ExportFilter{}, nil)
		if err != nil {
			b.Fatal(err)
		}
		if done.Events != int64(n) {
			b.Fatalf("exported %d of %d", done.Events, n)
		}
		events += done.Events
	}
	b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
	b.ReportMetric(float64(written)/b.Elapsed().Seconds()/1e6, "MB/s")
}

// BenchmarkImport loads an export of the log into a new database each
// time (its creation is not timed).
func BenchmarkImport(b *testing.B) {
	n := benchLogSize(b)
	src, srcDB, _ := newStore(b)
	seedNewsItems(b, src, srcDB, n)
	ctx := context.Background()
	path := filepath.Join(b.TempDir(), "log.ndjson")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := src.Export(ctx, f, eventstore.ExportFilter{}, nil); err != nil {
		b.Fatal(err)
	}
	key, err := src.SealKey(ctx)
	if err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	srcDB.Close()

	b.ResetTimer()
	var elapsed time.Duration
	for range b.N {
		b.StopTimer()
		dst, _, _ := newStore(b)
		in, err := os.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		t0 := time.Now()
		got, err := dst.Import(ctx, bufio.NewReaderSize(in, 1<<20), eventstore.ImportOptions{SealKey: key})
		elapsed += time.Since(t0)
		b.StopTimer()
		in.Close()
		if err != nil {
			b.Fatal(err)
		}
		if got.Events != int64(n) {
			b.Fatalf("imported %d of %d", got.Events, n)
		}
	}
	b.ReportMetric(float64(n*b.N)/elapsed.Seconds(), "events/s")
}

type countingWriter int64

func (w *countingWriter) Write(p []byte) (int, error) {
	*w += countingWriter(len(p))
	return len(p), nil
}

var _ io.Writer = (*countingWriter)(nil)
