// Package crawlstate is the crawler's state: every statement package
// ingest runs on its own tables, typed, grouped by table as the files are:
//
//   - schedule.go: crawl_state, the schedule and crawl leases of sources
//     (with what a claim reads beside them);
//   - seen.go: crawl_seen and crawl_failures, the URLs each source has
//     dealt with and those that failed;
//   - listings.go: crawl_listings, the validators of each source's
//     listings;
//   - happenings.go: ingest_event_documents, ingest_source_events and
//     ingest_event_holders, the documents that hold calendar happenings,
//     the happenings each source found, and which document has the word
//     on each;
//   - backfills.go: ingest_backfills, the backfill of each attachment and
//     its lease.
//
// The tables are made by ingest/migrations. Statements that read another
// owner's table beside these (the attachments read model, websub's
// subscriptions) take its columns, or the condition, from that owner. The
// crawl itself (package ingest) writes no SQL: it asks this store.
//
// No method holds a transaction open longer than a few statements (a
// crawl's failure records commit together), because an open transaction
// holds back the event store's read fence for every projector.
package crawlstate

import (
	"context"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/uptrace/bun"

	"github.com/feedsvc/feedsvc/internal/lease"
)

// Options say whose leases the store takes and how it schedules.
type Options struct {
	// Owner names this process in leases (ingest.Config.Owner).
	Owner string
	// LeaseDuration is how long a crawl or backfill lease lasts.
	LeaseDuration time.Duration
	// Schedule is the polling rule the release of a successful crawl
	// computes the next poll by (schedule.go).
	Schedule Schedule
	Logger   *slog.Logger
}

// Store reads and writes the crawler's tables.
type Store struct {
	db bun.IDB
	// pool runs the statements the schedule loop runs every tick, with
	// bound arguments (see schedule.go).
	pool  *pgxpool.Pool
	owner string
	lease time.Duration
	// Crawls are the crawl leases of sources (crawl_state), taken only
	// when the source is due; Pushes the same leases taken whether or not
	// it is (a WebSub push); Backfills the leases of backfills
	// (ingest_backfills).
	Crawls, Pushes, Backfills *Leases
	// releaseSQL is FlushReleases' statement (buildReleaseSQL).
	releaseSQL string
}

// New returns the store of the crawler's tables in db, whose pgx pool is
// pool.
func New(db *bun.DB, pool *pgxpool.Pool, opts Options) *Store {
	s := &Store{db: db, pool: pool, owner: opts.Owner, lease: opts.LeaseDuration,
		Crawls: &Leases{lease.New(db, lease.Table{Name: "crawl_state", Key: "source_id", Claimable: "t.next_at <= now()"},
			opts.Owner, opts.LeaseDuration, opts.Logger)},
		Pushes: &Leases{lease.New(db, lease.Table{Name: "crawl_state", Key: "source_id"},
			opts.Owner, opts.LeaseDuration, opts.Logger)},
		Backfills: &Leases{lease.New(db, lease.Table{Name: "ingest_backfills", Key: "attachment_id", Claimable: "t.done_at IS NULL"},
			opts.Owner, opts.LeaseDuration, opts.Logger)},
	}
	s.releaseSQL = buildReleaseSQL(opts.Schedule)
	return s
}

// Leases are the leases of one kind of work, keyed by the id of what is
// worked on (a source, an attachment).
type Leases struct{ l *lease.Leases }

// Claim takes the lease of id when it is free (and, for crawls, the
// source is due); false when another process holds it.
func (l *Leases) Claim(ctx context.Context, id any) (bool, error) { return l.l.Claim(ctx, id, "") }

// Keep renews the lease of id while work runs (lease.Leases.Keep).
func (l *Leases) Keep(ctx context.Context, id any, lost func()) (stop func()) {
	return l.l.Keep(ctx, id, lost)
}

// Release hands the lease of id back, changing nothing else.
func (l *Leases) Release(ctx context.Context, id any) error { return l.l.Release(ctx, id, "") }
